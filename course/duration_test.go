package course

import "testing"

// TestDurationSeconds: the one ISO 8601 duration reader of the run-time's total time, the
// sequencing time limits, xAPI durations and the reports.
func TestDurationSeconds(t *testing.T) {
	for in, want := range map[string]float64{
		"PT30M": 1800, "PT1H0M30S": 3630, "P1D": 86400, "PT0.5S": 0.5, "P1DT1H": 90000, "P1Y": 365 * 86400,
		"P1DT1H1M1.5S": 86400 + 3661.5, "PT1H2M3.5S": 3723.5, "PT90S": 90, "P1DT1S": 86401, "P1W": 604800, "P1M": 30 * 86400,
		"PT0S": 0, "P0D": 0,
	} {
		if got, ok := DurationSeconds(in); !ok || got != want {
			t.Errorf("DurationSeconds(%q) = %v, %v; want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "P", "PT", "P1DT", "30M", "PT1X", "1H", "PTxS", "P1H", "PT1S1M", "-PT1S", " PT1S"} {
		if got, ok := DurationSeconds(in); ok || got != 0 {
			t.Errorf("DurationSeconds(%q) = %v, %v; want refused", in, got, ok)
		}
	}
}
