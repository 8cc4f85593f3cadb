package validate

import "testing"

func TestCheckCollectsWithPointer(t *testing.T) {
	t.Parallel()
	var errs Errors
	if !errs.Check("/a", nil) || errs.Check("/title", Reject("must be short")) || len(errs) != 1 {
		t.Fatalf("Check: %v", errs)
	}
	if errs[0] != (FieldError{Pointer: "/title", Detail: "must be short"}) {
		t.Errorf("field error %+v", errs[0])
	}
	if IsRejection(errs.Err()) || !IsRejection(Reject("x")) {
		t.Error("IsRejection tells a field's refusal from a list of field errors wrongly")
	}
}
