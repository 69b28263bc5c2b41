package runtime

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		d           Dialect
		name, value string
		keep        bool
		code        int // 0: valid
	}{
		{SCORM12, "cmi.core.lesson_status", "passed", true, 0},
		{SCORM12, "cmi.core.lesson_status", "done", false, CodeType12},
		{SCORM12, "cmi.core.score.raw", "85.5", true, 0},
		{SCORM12, "cmi.core.score.raw", "101", false, CodeType12},
		{SCORM12, "cmi.core.score.raw", "eighty", false, CodeType12},
		{SCORM12, "cmi.core.session_time", "0000:01:30.5", true, 0},
		{SCORM12, "cmi.core.session_time", "PT1M", false, CodeType12},
		{SCORM12, "cmi.core.exit", "suspend", true, 0},
		{SCORM12, "cmi.core.exit", "normal", false, CodeType12},
		{SCORM12, "cmi.suspend_data", strings.Repeat("x", 4096), true, 0},
		{SCORM12, "cmi.suspend_data", strings.Repeat("x", 64001), false, CodeType12}, // Limits.Check applies the setting below that
		{SCORM12, "cmi.interactions.3.type", "choice", true, 0},
		{SCORM12, "cmi.interactions.03.type", "choice", false, CodeUndefined},
		{SCORM12, "cmi.interactions.0.time", "25:00:00", false, CodeType12},
		{SCORM12, "cmi.core.student_id", "anything", false, 0},
		{SCORM12, "cmi.completion_status", "completed", false, CodeUndefined},
		{SCORM12, "cmi.core.lesson_status", "", true, 0},
		{SCORM2004, "cmi.completion_status", "completed", true, 0},
		{SCORM2004, "cmi.success_status", "passed", true, 0},
		{SCORM2004, "cmi.success_status", "completed", false, CodeType2004},
		{SCORM2004, "cmi.score.scaled", "0.75", true, 0},
		{SCORM2004, "cmi.score.scaled", "1.5", false, CodeRange2004},
		{SCORM2004, "cmi.score.scaled", "high", false, CodeType2004},
		{SCORM2004, "cmi.progress_measure", "-0.1", false, CodeRange2004},
		{SCORM2004, "cmi.exit", "time-out", true, 0}, // RTE 4.2.8's spelling (ADL DMB)
		{SCORM2004, "cmi.exit", "timeout", false, CodeType2004},
		{SCORM2004, "cmi.exit", "normal", true, 0},
		{SCORM2004, "cmi.session_time", "PT1H2M3.5S", true, 0},
		{SCORM2004, "cmi.session_time", "01:00:00", false, CodeType2004},
		{SCORM2004, "cmi.session_time", "PT", false, CodeType2004},
		{SCORM2004, "cmi.interactions.0.timestamp", "2026-11-26T10:00:00Z", true, 0},
		{SCORM2004, "cmi.interactions.0.timestamp", "yesterday", false, CodeType2004},
		{SCORM2004, "cmi.interactions.0.type", "long-fill-in", true, 0},
		{SCORM2004, "cmi.location", strings.Repeat("l", 1001), false, CodeRange2004},
		// A localized string's language is not among its characters (ADL DMI's 4000-character
		// comment in en-US).
		{SCORM2004, "cmi.comments_from_learner.0.comment", "{lang=en-US}" + strings.Repeat("c", 4000), true, 0},
		{SCORM2004, "cmi.comments_from_learner.0.comment", "{lang=en-US}" + strings.Repeat("c", 4001), false, CodeRange2004},
		{SCORM2004, "cmi.interactions.0.description", "{lang=de}" + strings.Repeat("d", 250), true, 0},
		{SCORM2004, "cmi.comments_from_learner.0.location", "{lang=en}" + strings.Repeat("l", 245), false, CodeRange2004},
		// A performance response of 250 steps of 250-character names and answers (ADL DMI).
		{SCORM2004, "cmi.interactions.0.learner_response", strings.Repeat(strings.Repeat("n", 250)+"[.]"+strings.Repeat("a", 250)+"[,]", 249) + strings.Repeat("n", 250) + "[.]" + strings.Repeat("a", 250), true, 0},
		{SCORM2004, "cmi.interactions.0.correct_responses.0.pattern", "{order_matters=false}" + strings.Repeat(strings.Repeat("n", 250)+"[.]"+strings.Repeat("a", 250)+"[,]", 249) + strings.Repeat("n", 250) + "[.]" + strings.Repeat("a", 250), true, 0},
		{SCORM2004, "cmi.core.lesson_status", "passed", false, CodeUndefined},
		{SCORM2004, "adl.nav.request", "continue", true, 0},
		{SCORM2004, "adl.nav.request", "{target=sco-2}choice", true, 0},
		{SCORM2004, "adl.nav.request", "{target=sco-2}jump", true, 0},
		{SCORM2004, "adl.nav.request", "_none_", true, 0},
		{SCORM2004, "adl.nav.request", "next", false, CodeType2004},
		{SCORM2004, "adl.nav.request", "{target=}choice", false, CodeType2004},
		{SCORM2004, "adl.nav.request_valid.continue", "true", false, 0},
		{SCORM2004, "adl.data.0.store", "x", false, 0},
		{SCORM2004, "cmi.learner_id", "x", false, 0},
	} {
		keep, err := Validate(c.d, c.name, c.value)
		var e *Error
		switch {
		case c.code == 0 && err != nil:
			t.Errorf("%s %s=%q: unexpected error %v", c.d, c.name, c.value, err)
		case c.code != 0 && (!errors.As(err, &e) || e.Code != c.code):
			t.Errorf("%s %s=%q: error %v, want code %d", c.d, c.name, c.value, err, c.code)
		case c.code != 0 && !errors.Is(err, ErrInvalid):
			t.Errorf("%s %s: error does not wrap ErrInvalid", c.d, c.name)
		case keep != c.keep:
			t.Errorf("%s %s=%q: keep %v, want %v", c.d, c.name, c.value, keep, c.keep)
		}
	}
}

func TestParseCommit(t *testing.T) {
	// What scorm-again's flattened format sends for SCORM 1.2 (read-only elements included,
	// empty collections as {}), plus the commit sequence.
	body := `{"commitSequence":3,"cmi.core.lesson_status":"passed","cmi.core.score.raw":"85","cmi.core.student_id":"ann",
		"cmi.objectives":{},"cmi.interactions.0.id":"q1","cmi.interactions.0.correct_responses":{},"cmi.suspend_data":"abc"}`
	c, err := ParseCommit(SCORM12, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if c.Sequence != 3 || c.Values["cmi.core.lesson_status"] != "passed" || c.Values["cmi.interactions.0.id"] != "q1" {
		t.Errorf("commit %+v", c)
	}
	if _, ok := c.Values["cmi.core.student_id"]; ok {
		t.Error("read-only element stored")
	}
	// The nested JSON format flattens to the same names.
	c, err = ParseCommit(SCORM2004, []byte(`{"commitSequence":1,"cmi":{"completion_status":"completed","score":{"scaled":"0.5"},"interactions":[{"id":"q1","type":"choice"}]}}`))
	if err != nil || c.Values["cmi.score.scaled"] != "0.5" || c.Values["cmi.interactions.0.type"] != "choice" {
		t.Errorf("nested commit: %+v %v", c, err)
	}
	for _, bad := range []struct {
		body string
		code int
	}{
		{`not json`, CodeGeneral},
		{`[1,2]`, CodeGeneral},
		{`{"commitSequence":"x"}`, CodeGeneral},
		{`{"commitSequence":-1}`, CodeGeneral},
		{`{"commitSequence":1}{}`, CodeGeneral},
		{`{"commitSequence":1,"cmi.core.lesson_status":"great"}`, CodeType12},
		{`{"commitSequence":1,"cmi.nonsense":"1"}`, CodeUndefined},
		{`{"commitSequence":1,"cmi.core.score.raw":150}`, CodeType12},
	} {
		_, err := ParseCommit(SCORM12, []byte(bad.body))
		var e *Error
		if !errors.As(err, &e) || e.Code != bad.code {
			t.Errorf("%s: error %v, want code %d", bad.body, err, bad.code)
		}
	}
}

func TestDetailMapping(t *testing.T) {
	r := &Record{Dialect: SCORM12, Values: Values{"cmi.core.lesson_status": "failed", "cmi.core.score.raw": "40",
		"cmi.core.total_time": "0001:02:03.50", "cmi.core.exit": "suspend", "cmi.core.lesson_location": "p3"}}
	if st := r.Status(); st.Completion != "completed" || st.Success != "failed" {
		t.Errorf("1.2 status %+v", st)
	}
	if f, ok := r.ScoreScaled(); !ok || f != 0.4 {
		t.Errorf("1.2 scaled score %v %v", f, ok)
	}
	if s := r.TotalSeconds(); s != 3723.5 {
		t.Errorf("1.2 total seconds %v", s)
	}
	init := InitialValues(SCORM12, Launch{LearnerID: "ann", Credit: true}, r)
	if init["cmi.core.entry"] != "resume" || init["cmi.core.lesson_location"] != "p3" || init["cmi.core.student_id"] != "ann" || init["cmi.core.exit"] != "" {
		t.Errorf("initial values after a suspend: %v", init)
	}
	if v := InitialValues(SCORM2004, Launch{Review: true}, nil); v["cmi.entry"] != "ab-initio" || v["cmi.mode"] != "review" || v["cmi.credit"] != "no-credit" {
		t.Errorf("first launch values: %v", v)
	}
	if FormatDuration(3723.5) != "0001:02:03" {
		t.Errorf("format %s", FormatDuration(3723.5))
	}
}

func FuzzParseCommit(f *testing.F) {
	f.Add([]byte(`{"commitSequence":1,"cmi.core.lesson_status":"passed","cmi.interactions.0.id":"q"}`), true)
	f.Add([]byte(`{"commitSequence":2,"cmi":{"score":{"scaled":"0.5"},"interactions":[{"id":"a"}]}}`), false)
	f.Add([]byte(`{"cmi.session_time":"PT1H","cmi.exit":"suspend"}`), false)
	f.Fuzz(func(t *testing.T, body []byte, v12 bool) {
		d := SCORM2004
		if v12 {
			d = SCORM12
		}
		c, err := ParseCommit(d, body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == 0 {
				t.Fatalf("error without a SCORM code: %v", err)
			}
			return
		}
		// Whatever was accepted validates again element by element.
		for k, v := range c.Values {
			if keep, err := Validate(d, k, v); err != nil || !keep {
				t.Fatalf("accepted %s=%q does not validate: %v", k, v, err)
			}
		}
	})
}

// TestLimitsAndReset: PlayerSuspendDataMaxLength's check with each dialect's code, the
// reset modes of PlayerResetRunTimeData, and a no-credit commit's elements.
func TestLimitsAndReset(t *testing.T) {
	for _, tc := range []struct {
		d    Dialect
		lim  Limits
		n    int
		code int
	}{
		{SCORM12, Limits{SuspendData: 4096}, 4096, 0},
		{SCORM12, Limits{SuspendData: 4096}, 4097, CodeType12},
		{SCORM2004, Limits{SuspendData: 5000}, 5001, CodeRange2004},
		{SCORM12, Limits{}, 64000, 0},
		{SCORM2004, Limits{}, 64001, CodeRange2004},
	} {
		err := tc.lim.Check(tc.d, Values{"cmi.suspend_data": strings.Repeat("é", tc.n)})
		var e *Error
		if tc.code == 0 && err != nil || tc.code != 0 && (!errors.As(err, &e) || e.Code != tc.code) {
			t.Errorf("%s limit %d, %d characters: %v, want code %d", tc.d, tc.lim.SuspendData, tc.n, err, tc.code)
		}
	}
	suspended := &Record{Dialect: SCORM2004, Values: Values{"cmi.exit": "suspend"}}
	normal := &Record{Dialect: SCORM2004, Values: Values{"cmi.exit": "normal"}}
	normal12 := &Record{Dialect: SCORM12, Values: Values{"cmi.core.exit": ""}}
	for _, tc := range []struct {
		mode string
		d    Dialect
		rec  *Record
		want bool
	}{
		{"", SCORM2004, normal, true},
		{"", SCORM2004, suspended, false},
		{"", SCORM12, normal12, false},
		{"", SCORM2004, nil, false},
		{ResetNever, SCORM2004, normal, false},
		{ResetWhenExitIsNotSuspend, SCORM12, normal12, true},
		{ResetOnNewSequencingAttempt, SCORM2004, normal, true},
		{ResetOnNewSequencingAttempt, SCORM2004, suspended, false},
	} {
		if got := StartsAfresh(tc.mode, tc.d, tc.rec); got != tc.want {
			t.Errorf("StartsAfresh(%q, %s, %v) = %v", tc.mode, tc.d, tc.rec, got)
		}
	}
	v := Values{"cmi.core.lesson_status": "failed", "cmi.core.score.raw": "10", "cmi.suspend_data": "p=2", "cmi.core.lesson_location": "2"}.WithoutResults()
	if len(v) != 2 || v["cmi.suspend_data"] != "p=2" || v["cmi.core.lesson_location"] != "2" {
		t.Errorf("no-credit commit keeps %v", v)
	}
}

// A SCO's pending adl.nav.request travels with its commit, not with its stored data.
func TestParseCommitNavRequest(t *testing.T) {
	c, err := ParseCommit(SCORM2004, []byte(`{"commitSequence":2,"cmi.exit":"normal","adl.nav.request":"{target=b}choice","adl.nav.request_valid.continue":"true"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.NavRequest != "{target=b}choice" || len(c.Values) != 1 || c.Values["cmi.exit"] != "normal" {
		t.Errorf("commit %+v", c)
	}
	if c, err = ParseCommit(SCORM2004, []byte(`{"commitSequence":3,"adl.nav.request":"_none_"}`)); err != nil || c.NavRequest != "" {
		t.Errorf("_none_: %+v %v", c, err)
	}
	if _, err = ParseCommit(SCORM2004, []byte(`{"commitSequence":3,"adl.nav.request":"jump"}`)); err == nil {
		t.Error("jump without a target accepted")
	}
}
