package registration

import "testing"

func TestShouldRestart(t *testing.T) {
	done := Progress{Completion: Completed, Success: Passed}
	failed := Progress{Completion: Completed, Success: Failed}
	open := Untracked()
	for _, c := range []struct {
		rule  string
		p     Progress
		newer bool
		want  bool
	}{
		{"NEVER", done, true, false},
		{DefaultRestartRule, done, true, true},
		{DefaultRestartRule, done, false, false},
		{DefaultRestartRule, open, true, false},
		{"", done, true, true},
		{"WHEN_NEWER_PACKAGE_VERSION_EXISTS", open, true, true},
		{"WHEN_NEWER_PACKAGE_VERSION_EXISTS", done, false, false},
		{"WHEN_EXISTING_REG_IS_COMPLETE", done, false, true},
		{"WHEN_EXISTING_REG_IS_COMPLETE", open, true, false},
		{"WHEN_EXISTING_REG_IS_SATISFIED", done, false, true},
		{"WHEN_EXISTING_REG_IS_SATISFIED", failed, false, false},
		{"WHEN_EXISTING_REG_IS_SATISFIED_AND_NEWER_PACKAGE_VERSION_EXISTS", done, false, false},
		{"WHEN_EXISTING_REG_IS_SATISFIED_AND_NEWER_PACKAGE_VERSION_EXISTS", done, true, true},
		{"WHEN_EXISTING_REG_IS_INCOMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS", open, true, true},
		{"WHEN_EXISTING_REG_IS_INCOMPLETE_AND_NEWER_PACKAGE_VERSION_EXISTS", done, true, false},
		{"WHEN_EXISTING_REG_IS_FAILED", failed, false, true},
		{"WHEN_EXISTING_REG_IS_FAILED", done, false, false},
		{"WHEN_EXISTING_REG_IS_FAILED_AND_NEWER_PACKAGE_VERSION_EXISTS", failed, false, false},
		{"WHEN_EXISTING_REG_IS_FAILED_AND_NEWER_PACKAGE_VERSION_EXISTS", failed, true, true},
	} {
		if got := ShouldRestart(c.rule, c.p, c.newer); got != c.want {
			t.Errorf("%s %+v newer=%v: %v, want %v", c.rule, c.p, c.newer, got, c.want)
		}
	}
}
