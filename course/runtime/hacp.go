package runtime

import (
	"fmt"
	"strings"
)

// AICC HACP (the HTTP AICC Communication Protocol, CMI001 appendix A): the AU posts
// command, version, session_id and AICC_Data as a form and reads an INI-like answer. The data
// model is the one SCORM 1.2 inherited, so AICC runtime data is stored as SCORM 1.2 values.

// HACP error codes of the answer's error line.
const (
	HACPOK             = 0
	HACPInvalidCommand = 1
	HACPInvalidSession = 3
)

// HACPAnswer renders an answer: the error line, its text and, for GetParam, the data.
func HACPAnswer(code int, text, data string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error=%d\r\nerror_text=%s\r\n", code, strings.NewReplacer("\r", " ", "\n", " ").Replace(text))
	if data != "" {
		b.WriteString("aicc_data=")
		b.WriteString(data)
	}
	return b.String()
}

var hacpStatus = map[byte]string{'p': "passed", 'c': "completed", 'f': "failed", 'i': "incomplete", 'b': "browsed", 'n': "not attempted"}

// ParsePutParam reads the AICC_Data of a PutParam into SCORM 1.2 values: [Core] Lesson_Status
// (a status word or its first letter, optionally followed by an exit flag: s suspend,
// l logout, t time-out), Lesson_Location, Score (raw[,max[,min]]), Time (the session's time)
// and [Core_Lesson] (the suspend data). Every value is validated as its SCORM 1.2 element; a
// bad one is an *Error.
func ParsePutParam(data string) (Values, error) {
	v := Values{}
	section := ""
	var lesson []string
	for _, line := range strings.Split(strings.ReplaceAll(data, "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			section = strings.ToLower(strings.TrimSpace(t[1 : len(t)-1]))
			continue
		}
		if section == "core_lesson" {
			lesson = append(lesson, line)
			continue
		}
		if section != "core" || t == "" || strings.HasPrefix(t, ";") {
			continue
		}
		k, val, ok := strings.Cut(t, "=")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "lesson_status":
			st, flag, _ := strings.Cut(val, ",")
			st, flag = strings.ToLower(strings.TrimSpace(st)), strings.ToLower(strings.TrimSpace(flag))
			word := ""
			if st != "" {
				word = hacpStatus[st[0]]
			}
			if word == "" || (len(st) > 1 && st != word) {
				return nil, &Error{Code: CodeType12, Element: "Lesson_Status", Message: fmt.Sprintf("%q is not an AICC lesson status", val)}
			}
			v["cmi.core.lesson_status"] = word
			switch {
			case flag == "":
			case flag[0] == 's':
				v["cmi.core.exit"] = "suspend"
			case flag[0] == 'l':
				v["cmi.core.exit"] = "logout"
			case flag[0] == 't':
				v["cmi.core.exit"] = "time-out"
			}
		case "lesson_location":
			v["cmi.core.lesson_location"] = val
		case "score":
			parts := strings.Split(val, ",")
			for i, name := range []string{"raw", "max", "min"} {
				if i < len(parts) {
					v["cmi.core.score."+name] = strings.TrimSpace(parts[i])
				}
			}
		case "time":
			v["cmi.core.session_time"] = val
		}
	}
	if len(lesson) > 0 {
		v["cmi.suspend_data"] = strings.TrimSpace(strings.Join(lesson, "\n"))
	}
	for k, val := range v {
		if _, err := Validate(SCORM12, k, val); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Timespan writes seconds as a SCORM 1.2 CMITimespan, HHHH:MM:SS with hundredths when
// there are any.
func Timespan(seconds float64) string {
	if seconds < 0 {
		seconds = 0
	}
	c := int64(seconds*100 + 0.5)
	n := c / 100
	out := fmt.Sprintf("%04d:%02d:%02d", n/3600, n/60%60, n%60)
	if f := c % 100; f != 0 {
		out += fmt.Sprintf(".%02d", f)
	}
	return out
}

// GetParamData renders the AICC_Data of a GetParam answer from the SCO's initial values
// (InitialValues with SCORM12).
func GetParamData(v Values) string {
	status := v["cmi.core.lesson_status"]
	if status == "" {
		status = "not attempted"
	}
	if e := v["cmi.core.entry"]; e != "" {
		status += ", " + e
	}
	score := v["cmi.core.score.raw"]
	if score != "" && v["cmi.core.score.max"] != "" {
		score += "," + v["cmi.core.score.max"]
		if v["cmi.core.score.min"] != "" {
			score += "," + v["cmi.core.score.min"]
		}
	}
	t := v["cmi.core.total_time"]
	if t == "" {
		t = "00:00:00"
	}
	one := strings.NewReplacer("\r", " ", "\n", " ")
	var b strings.Builder
	line := func(k, val string) { b.WriteString(k + "=" + one.Replace(val) + "\r\n") }
	b.WriteString("[Core]\r\n")
	line("Student_ID", v["cmi.core.student_id"])
	line("Student_Name", v["cmi.core.student_name"])
	line("Lesson_Location", v["cmi.core.lesson_location"])
	line("Credit", v["cmi.core.credit"])
	line("Lesson_Status", status)
	line("Score", score)
	line("Time", t)
	line("Lesson_Mode", v["cmi.core.lesson_mode"])
	b.WriteString("[Core_Lesson]\r\n" + v["cmi.suspend_data"] + "\r\n")
	b.WriteString("[Core_Vendor]\r\n" + v["cmi.launch_data"] + "\r\n")
	b.WriteString("[Student_Data]\r\n")
	line("Mastery_Score", v["cmi.student_data.mastery_score"])
	line("Max_Time_Allowed", v["cmi.student_data.max_time_allowed"])
	line("Time_Limit_Action", v["cmi.student_data.time_limit_action"])
	return b.String()
}
