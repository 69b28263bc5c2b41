package runtime

import (
	"errors"
	"strings"
	"testing"
)

func TestParsePutParam(t *testing.T) {
	v, err := ParsePutParam("[Core]\r\nLesson_Location = page 4\r\nlesson_status=P, s\r\nScore=85,100,0\r\nTime=00:05:30\r\n[Core_Lesson]\r\nbookmark=4\r\nq=1\r\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Values{"cmi.core.lesson_location": "page 4", "cmi.core.lesson_status": "passed", "cmi.core.exit": "suspend",
		"cmi.core.score.raw": "85", "cmi.core.score.max": "100", "cmi.core.score.min": "0", "cmi.core.session_time": "00:05:30",
		"cmi.suspend_data": "bookmark=4\nq=1"}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("%s = %q, want %q", k, v[k], w)
		}
	}
	if v, err := ParsePutParam("[core]\nLesson_Status=incomplete\n"); err != nil || v["cmi.core.lesson_status"] != "incomplete" || v["cmi.core.exit"] != "" {
		t.Errorf("full word: %v %v", v, err)
	}
	for _, bad := range []string{"[Core]\nLesson_Status=great", "[Core]\nScore=lots", "[Core]\nTime=5 minutes", "[Core]\nLesson_Status=pending"} {
		if _, err := ParsePutParam(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	for sec, want := range map[float64]string{3605: "0001:00:05", 14.46: "0000:00:14.46", 0: "0000:00:00", -3: "0000:00:00"} {
		if got := Timespan(sec); got != want {
			t.Errorf("Timespan(%v) = %s, want %s", sec, got, want)
		}
	}
}

// An AU's PutParams repeat the session's running time: the latest replaces the session's
// earlier ones, and a new session (ExitAU, another player session, a running time that goes
// back) adds to the total.
func TestHACPTotal(t *testing.T) {
	rt := &Record{Values: Values{"cmi.core.total_time": "0000:10:00"}}
	step := func(session string, sec, want float64) {
		t.Helper()
		got := rt.hacpTotal(&HACPTime{Session: session, Seconds: sec})
		rt.Values["cmi.core.total_time"] = Timespan(got)
		if got != want {
			t.Errorf("PutParam %s %vs: total %v, want %v", session, sec, got, want)
		}
	}
	step("s1", 60, 660)
	step("s1", 120, 720)
	step("s1", 180, 780) // not 600+60+120+180
	rt.HACP.Open = false // ExitAU
	step("s1", 30, 810)
	step("s1", 45, 825)
	step("s2", 50, 875)  // another player session
	step("s2", 10, 885)  // the AU loaded again without ExitAU: its time starts over
	step("s2", 100, 975) // and runs on
}

func TestGetParamData(t *testing.T) {
	rec := &Record{Dialect: SCORM12, Values: Values{"cmi.core.lesson_status": "incomplete", "cmi.core.exit": "suspend",
		"cmi.suspend_data": "bookmark=4", "cmi.core.score.raw": "40", "cmi.core.total_time": "0000:05:30"}}
	d := GetParamData(InitialValues(SCORM12, Launch{LearnerID: "ann", LearnerName: "Lee, Ann", Credit: true, LaunchData: "start=1", MasteryScore: "80"}, rec))
	for _, want := range []string{"[Core]\r\n", "Student_ID=ann\r\n", "Student_Name=Lee, Ann\r\n", "Lesson_Status=incomplete, resume\r\n",
		"Credit=credit\r\n", "Score=40\r\n", "Time=0000:05:30\r\n", "[Core_Lesson]\r\nbookmark=4\r\n", "[Core_Vendor]\r\nstart=1\r\n", "Mastery_Score=80\r\n"} {
		if !strings.Contains(d, want) {
			t.Errorf("GetParam data lacks %q:\n%s", want, d)
		}
	}
	if a := HACPAnswer(0, "Successful", "[Core]\r\n"); a != "error=0\r\nerror_text=Successful\r\naicc_data=[Core]\r\n" {
		t.Errorf("answer %q", a)
	}
}
