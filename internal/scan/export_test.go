package scan

// FoldDue is foldDue, for the external tests.
var FoldDue = foldDue
