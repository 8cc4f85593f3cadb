package scan

// FoldDue is foldDue, for the external tests.
var FoldDue = foldDue

// SetWorkspaceHours turns the fold's rows of the overview's hours on or
// off (BenchmarkFold measures what they cost).
func SetWorkspaceHours(on bool) { workspaceHours = on }
