package course

import (
	"regexp"
	"strconv"
)

// isoDuration matches the ISO 8601 durations the standards write (xs:duration, PnYnMnWnDTnHnMnS,
// each number with an optional fraction): SCORM 2004's timeinterval, the sequencing limit
// conditions and xAPI's result.duration.
var isoDuration = regexp.MustCompile(`^P(?:(\d+(?:\.\d+)?)Y)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)W)?(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// DurationSeconds reads an ISO 8601 duration in seconds. Years, months and weeks count as
// 365, 30 and 7 days: every use is a span (time in the content, a time limit), never a
// calendar date. ok is false for an empty or malformed value ("P", "PT", "PT1X"); what a
// caller does then (0 s, no limit, the text as written) is its own rule. The run-time's
// SetValue checks SCORM's stricter timeinterval before anything is stored.
func DurationSeconds(d string) (seconds float64, ok bool) {
	m := isoDuration.FindStringSubmatch(d)
	if m == nil || d == "P" || d == "PT" || d[len(d)-1] == 'T' {
		return 0, false
	}
	for i, unit := range []float64{365 * 86400, 30 * 86400, 7 * 86400, 86400, 3600, 60, 1} {
		if m[i+1] != "" {
			v, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				return 0, false
			}
			seconds += v * unit
		}
	}
	return seconds, true
}
