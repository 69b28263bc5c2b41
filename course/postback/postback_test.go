package postback_test

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/postback"
	"github.com/lectern-lms/lectern/course/registration"
	"github.com/lectern-lms/lectern/course/rollup"
	"github.com/lectern-lms/lectern/course/rollup/rolluptest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// report is a realistic multi-SCO SCORM 2004 registration half way through its course.
func report(t *testing.T) postback.Report { return reportOf(t, rolluptest.SCORM2004) }

func reportOf(t *testing.T, build func() (*course.Package, rollup.State)) postback.Report {
	t.Helper()
	pkg, st := build()
	r := rollup.Compute(rollup.Input{Package: pkg, State: st, Settings: rollup.DefaultSettings(), ForCredit: true})
	p := registration.Untracked()
	r.Apply(&p, rolluptest.When())
	first, last := rolluptest.When().Add(-time.Hour), rolluptest.When()
	p.FirstAccess, p.LastAccess = &first, &last
	reg := &registration.Registration{ID: "reg-42 & co", CourseID: "safety", ForCredit: true,
		Learner: registration.Learner{ID: "learner@example.com", FirstName: "Ada", LastName: "Lovelace"}}
	rep := postback.Report{Registration: reg, Instance: 1, Progress: p, Details: r.Details(pkg, st, true), Updated: last}
	if pkg.Standard != course.SCORM12 {
		// One global objective shared through objective maps, satisfied with a measure.
		rep.GlobalObjectives = []registration.ObjectiveResult{{ID: "urn:safety:hazards", ObjectiveSuccess: registration.Passed,
			ObjectiveCompletion: registration.Completed, Score: &registration.Scaled{Scaled: 82.5}}}
	}
	return rep
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs:\n%s", path, got)
	}
}

// TestReportGolden pins every format for a SCORM 2004 registration (report_<format>.*) and
// a SCORM 1.2 one (report_scorm12_<format>.xml).
func TestReportGolden(t *testing.T) {
	for _, c := range []struct {
		prefix string
		build  func() (*course.Package, rollup.State)
		json   bool
	}{{"report_", rolluptest.SCORM2004, true}, {"report_scorm12_", rolluptest.SCORM12, false}} {
		rep := reportOf(t, c.build)
		for _, f := range []postback.Format{postback.Course, postback.Activity, postback.Full} {
			t.Run(c.prefix+string(f), func(t *testing.T) {
				x, err := postback.XML(rep, f)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, c.prefix+strings.ToLower(string(f))+".xml", x)
				if !c.json {
					return
				}
				j, err := postback.JSON(rep, f)
				if err != nil {
					t.Fatal(err)
				}
				golden(t, c.prefix+strings.ToLower(string(f))+".json", j)
			})
		}
	}
}

// node is a generic XML tree, to read reports the way a receiver's parser does.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Text     string     `xml:",chardata"`
	Children []node     `xml:",any"`
}

func (n node) child(name string) node {
	for _, c := range n.Children {
		if c.XMLName.Local == name {
			return c
		}
	}
	return node{}
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

func (n node) names() []string {
	var out []string
	for _, c := range n.Children {
		out = append(out, c.XMLName.Local)
	}
	return out
}

func parse(t *testing.T, b []byte) node {
	t.Helper()
	var n node
	if err := xml.Unmarshal(b, &n); err != nil {
		t.Fatalf("report is not well-formed XML: %v\n%s", err, b)
	}
	return n
}

func TestReportStructure(t *testing.T) {
	rep := report(t)
	x, _ := postback.XML(rep, postback.Course)
	if !bytes.HasPrefix(x, []byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<registrationreport format="course" regid="reg-42 &amp; co" instanceid="1">`)) {
		t.Fatalf("course report head:\n%s", x)
	}
	n := parse(t, x)
	if got := strings.Join(n.names(), ","); got != "complete,success,totaltime,score" {
		t.Fatalf("course children %s", got)
	}
	// 1106.8 s tracked → 1107; root measure 0.283333 → 28.3333.
	if n.child("complete").Text != "incomplete" || n.child("success").Text != "unknown" || n.child("totaltime").Text != "1107" || n.child("score").Text != "28.3333" {
		t.Fatalf("course values: %+v", n.Children)
	}
	rep.Progress.ScoreScaled = nil
	x, _ = postback.XML(rep, postback.Course)
	if parse(t, x).child("score").Text != "unknown" {
		t.Fatalf("unknown score:\n%s", x)
	}

	x, _ = postback.XML(report(t), postback.Activity)
	root := parse(t, x).child("activity")
	if root.attr("id") != "org_safety" || strings.Join(root.names(), ",") != "title,attempts,complete,success,time,score,children" {
		t.Fatalf("activity root: %s %v", root.attr("id"), root.names())
	}
	quiz := root.child("children").Children[0].child("children").Children[1]
	if quiz.attr("id") != "item_quiz" || quiz.child("success").Text != "passed" || quiz.child("score").Text != "85" || quiz.child("attempts").Text != "2" || quiz.child("time").Text != "0000:11:11" {
		t.Fatalf("quiz activity: %+v", quiz)
	}

	x, _ = postback.XML(report(t), postback.Full)
	root = parse(t, x).child("activity")
	want := "title,satisfied,completed,progressstatus,attemptprogressstatus,attempts,suspended,objectives,children"
	if got := strings.Join(root.names(), ","); got != want {
		t.Fatalf("full root children %s, want %s", got, want)
	}
	quiz = root.child("children").Children[0].child("children").Children[1]
	want = "title,satisfied,completed,progressstatus,attemptprogressstatus,attempts,suspended,objectives,runtime,children"
	if got := strings.Join(quiz.names(), ","); got != want {
		t.Fatalf("full SCO children %s, want %s", got, want)
	}
	rt := quiz.child("runtime")
	want = "completion_status,credit,entry,exit,learnerpreference,location,mode,progress_measure,score_scaled,score_raw,score_min,score_max,total_time,timetracked,success_status,suspend_data,comments_from_learner,comments_from_lms,interactions,objectives,static"
	if got := strings.Join(rt.names(), ","); got != want {
		t.Fatalf("runtime children %s, want %s", got, want)
	}
	if rt.child("credit").Text != "Credit" || rt.child("entry").Text != "Resume" || rt.child("exit").Text != "Normal" ||
		rt.child("success_status").Text != "Passed" || rt.child("completion_status").Text != "Completed" ||
		rt.child("learnerpreference").child("audio_level").Text != "1.0" {
		t.Fatalf("runtime vocabulary: %+v", rt.Children[:5])
	}
	if c := rt.child("comments_from_learner").child("comment"); c.child("value").Text != "Question 7 <ladders> was unclear & long" {
		t.Fatalf("learner comment %+v", c)
	}
	q1 := rt.child("interactions").Children[0]
	if q1.attr("id") != "q1" || q1.child("objectives").child("objective").attr("id") != "obj_ladders" ||
		q1.child("correct_responses").child("response").attr("id") != "b" || q1.child("result").Text != "correct" {
		t.Fatalf("interaction %+v", q1)
	}
	ro := rt.child("objectives").child("objective")
	if ro.attr("id") != "obj_ladders" || ro.child("score_scaled").Text != "1" || ro.child("success_status").Text != "Passed" {
		t.Fatalf("runtime objective %+v", ro)
	}
	st := rt.child("static")
	if st.child("learner_name").Text != "Ada Lovelace" || st.child("learner_id").Text != "learner@example.com" ||
		st.child("scaled_passing_score").Text != "0.8" || st.child("time_limit_action").Text != "Undefined" || st.child("launch_data").Text != "mode=exam" {
		t.Fatalf("static %+v", st)
	}
	obj := quiz.child("objectives").Children[0]
	if obj.attr("primary") != "true" || obj.child("normalizedmeasure").Text != "0.85" || obj.child("satisfiedstatus").Text != "true" || obj.child("measurestatus").Text != "true" {
		t.Fatalf("primary objective %+v", obj)
	}
	fire := root.child("children").Children[1].child("children").Children[0]
	if fire.child("suspended").Text != "true" || fire.child("completed").Text != "false" || fire.child("runtime").child("exit").Text != "Suspend" {
		t.Fatalf("suspended SCO %+v", fire.names())
	}
}

func TestReportErrors(t *testing.T) {
	rep := report(t)
	rep.Details = nil
	if _, err := postback.XML(rep, postback.Course); err != nil {
		t.Fatalf("course needs no tree: %v", err)
	}
	for _, f := range []postback.Format{postback.Activity, postback.Full} {
		if _, err := postback.XML(rep, f); !errors.Is(err, postback.ErrInvalid) {
			t.Errorf("%s without a tree: %v", f, err)
		}
	}
	if f, err := postback.ParseFormat("full"); err != nil || f != postback.Full {
		t.Fatalf("ParseFormat(full) %v %v", f, err)
	}
	if f, err := postback.ParseFormat(""); err != nil || f != postback.Course {
		t.Fatalf("ParseFormat('') %v %v", f, err)
	}
	if _, err := postback.ParseFormat("summary"); !errors.Is(err, postback.ErrInvalid) {
		t.Fatalf("ParseFormat(summary) %v", err)
	}
	for _, tg := range []postback.Target{{URL: "ftp://lms.example.com/x"}, {URL: "/relative"}, {URL: "https://lms.example.com/", AuthType: "oauth"},
		{URL: "https://lms.example.com/", Format: "summary"}} {
		if _, err := postback.Build(tg, report(t)); !errors.Is(err, postback.ErrInvalid) {
			t.Errorf("%+v: %v", tg, err)
		}
	}
}

// TestRequestsReachAReceiver sends what Build returns to a real HTTP server and reads it
// the way an LMS does: form fields, or Basic auth and an XML body, and the signature.
func TestRequestsReachAReceiver(t *testing.T) {
	key := []byte("tenant-signing-key")
	type got struct {
		header           http.Header
		body             []byte
		user, pass, data string
		basicOK          bool
		basicU, basicP   string
	}
	ch := make(chan got, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		g := got{header: r.Header, body: body}
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
			r.Body = io.NopCloser(bytes.NewReader(body))
			if err := r.ParseForm(); err == nil {
				g.user, g.pass, g.data = r.PostForm.Get("username"), r.PostForm.Get("password"), r.PostForm.Get("data")
			}
		}
		g.basicU, g.basicP, g.basicOK = r.BasicAuth()
		ch <- g
	}))
	defer srv.Close()
	send := func(req *postback.Request) got {
		t.Helper()
		hr, err := http.NewRequest(req.Method, req.URL, bytes.NewReader(req.Body))
		if err != nil {
			t.Fatal(err)
		}
		hr.Header = req.Header
		resp, err := srv.Client().Do(hr)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return <-ch
	}
	rep := report(t)
	want, _ := postback.XML(rep, postback.Activity)

	req, err := postback.Build(postback.Target{URL: srv.URL + "/results", UserName: "lms", Password: "p&ss=word", Format: postback.Activity, SigningKey: key}, rep)
	if err != nil {
		t.Fatal(err)
	}
	g := send(req)
	if g.user != "lms" || g.pass != "p&ss=word" || g.data != string(want) {
		t.Fatalf("form fields: user %q pass %q data equal %v", g.user, g.pass, g.data == string(want))
	}
	if !postback.Verify(key, g.body, g.header.Get(postback.SignatureHeader)) {
		t.Fatalf("form body signature %q does not verify", g.header.Get(postback.SignatureHeader))
	}
	if postback.Verify([]byte("other key"), g.body, g.header.Get(postback.SignatureHeader)) {
		t.Fatal("signature verifies under another key")
	}

	req, err = postback.Build(postback.Target{URL: srv.URL, AuthType: "httpbasic", UserName: "lms", Password: "secret", Format: postback.Activity, SigningKey: key}, rep)
	if err != nil {
		t.Fatal(err)
	}
	g = send(req)
	if !g.basicOK || g.basicU != "lms" || g.basicP != "secret" || !bytes.Equal(g.body, want) || g.header.Get("Content-Type") != "text/xml; charset=utf-8" {
		t.Fatalf("httpbasic: auth %v %q/%q, type %q, body equal %v", g.basicOK, g.basicU, g.basicP, g.header.Get("Content-Type"), bytes.Equal(g.body, want))
	}
	if !postback.Verify(key, g.body, g.header.Get(postback.SignatureHeader)) {
		t.Fatal("xml body signature does not verify")
	}

	req, err = postback.Build(postback.Target{URL: srv.URL, AuthType: "HTTPBASIC", Format: postback.Full, JSON: true}, rep)
	if err != nil {
		t.Fatal(err)
	}
	g = send(req)
	wantJSON, _ := postback.JSON(rep, postback.Full)
	if g.basicOK || !bytes.Equal(g.body, wantJSON) || g.header.Get("Content-Type") != "application/json" || g.header.Get(postback.SignatureHeader) != "" {
		t.Fatalf("json without credentials or key: auth %v type %q sig %q", g.basicOK, g.header.Get("Content-Type"), g.header.Get(postback.SignatureHeader))
	}
}

func TestJSONReport(t *testing.T) {
	rep := report(t)
	type node struct {
		ID                 string          `json:"id"`
		ActivityCompletion string          `json:"activityCompletion"`
		Runtime            json.RawMessage `json:"runtime"`
		Objectives         json.RawMessage `json:"objectives"`
		Children           []node          `json:"children"`
	}
	var doc struct {
		Format                 string                    `json:"format"`
		ID                     string                    `json:"id"`
		RegistrationCompletion string                    `json:"registrationCompletion"`
		Score                  *struct{ Scaled float64 } `json:"score"`
		TotalSecondsTracked    float64                   `json:"totalSecondsTracked"`
		ActivityDetails        *node                     `json:"activityDetails"`
	}
	for _, tc := range []struct {
		f       postback.Format
		tree    bool
		runtime bool
	}{{postback.Course, false, false}, {postback.Activity, true, false}, {postback.Full, true, true}} {
		b, err := postback.JSON(rep, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		doc.ActivityDetails = nil
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Format != string(tc.f) || doc.ID != "reg-42 & co" || doc.RegistrationCompletion != "INCOMPLETE" || doc.Score == nil || doc.Score.Scaled != 28.3333 || doc.TotalSecondsTracked != 1106.8 {
			t.Fatalf("%s summary: %+v", tc.f, doc)
		}
		if (doc.ActivityDetails != nil) != tc.tree {
			t.Fatalf("%s: tree present %v", tc.f, doc.ActivityDetails != nil)
		}
		if tc.tree {
			quiz := doc.ActivityDetails.Children[0].Children[1]
			if quiz.ID != "item_quiz" || quiz.ActivityCompletion != "COMPLETED" || (quiz.Runtime != nil) != tc.runtime || (quiz.Objectives != nil) != tc.runtime {
				t.Fatalf("%s quiz node: %+v", tc.f, quiz)
			}
		}
	}
}

// A scored, satisfied SCORM 2004 SCO whose manifest declares no objectives reports its
// primary objective (PRIMARYOBJ) with its measure, and every time of the FULL report is
// HHHH:MM:SS, the SCO's ISO 8601 total_time included (issue 23, defect 7).
func TestFullReportImplicitPrimaryObjective(t *testing.T) {
	pkg := &course.Package{Standard: course.SCORM2004v4, Root: &course.Activity{ID: "org", Title: "Course", Children: []*course.Activity{
		{ID: "sco", Title: "SCO", LaunchURL: "sco.html", ScormType: "sco", Visible: true}}}}
	scaled, pm := 0.9, 1.0
	st := rollup.State{"sco": {CompletionStatus: "completed", SuccessStatus: "passed", ScoreScaled: &scaled, ProgressMeasure: &pm,
		TotalTime: "PT14.46S", SecondsTracked: 14.7, Attempts: 1, Terminated: true, Updated: rolluptest.When()}}
	r := rollup.Compute(rollup.Input{Package: pkg, State: st, Settings: rollup.DefaultSettings(), ForCredit: true})
	p := registration.Untracked()
	r.Apply(&p, rolluptest.When())
	reg := &registration.Registration{ID: "r", CourseID: "c", ForCredit: true, Learner: registration.Learner{ID: "ann"}}
	got, err := postback.XML(postback.Report{Registration: reg, Instance: 0, Progress: p, Details: r.Details(pkg, st, true)}, postback.Full)
	if err != nil {
		t.Fatal(err)
	}
	compact := regexp.MustCompile(`>\s+<`).ReplaceAllString(string(got), "><")
	sco := compact[strings.Index(compact, `<activity id="sco">`):]
	for _, want := range []string{
		`<objectives><objective id="PRIMARYOBJ" primary="true"><measurestatus>true</measurestatus><normalizedmeasure>0.9</normalizedmeasure>` +
			`<progressstatus>true</progressstatus><satisfiedstatus>true</satisfiedstatus></objective></objectives>`,
		`<total_time>0000:00:14</total_time><timetracked>0000:00:14</timetracked>`,
	} {
		if !strings.Contains(sco, want) {
			t.Errorf("the SCO's FULL report lacks %s:\n%s", want, got)
		}
	}
}
