package sequencing

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/lectern-lms/lectern/course"
	"github.com/lectern-lms/lectern/course/scorm"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// ADL's SCORM 2004 4th edition LMS test cases script what each test SCO does (SetValue,
// GetValue of adl.nav.request_valid.*, the navigation request it leaves, the button the
// tester presses) in TestCases/<case>.properties, one block per delivery ("Act3V1" = the
// first visit of activity_3). The order of the blocks is the delivery order the LMS must
// produce. adlCase replays such a script against the sequencer: it reports each runtime
// value, answers each request_valid question, issues the navigation request and checks that
// the next block's activity is what gets delivered.

type adlBlock struct {
	act      string // the item whose launch parameters say act=N (activity_N in most packages)
	commands []string
	cui      string
	// uiq and uia are the tester's questions about the table of contents and the answers
	// expected ("toc.enabled.selectable@Activity 4" / "Y").
	uiq, uia []string
}

type adlScript struct {
	start  string // "." for a start request, else the title of the activity chosen first
	blocks []adlBlock
}

var blockKey = regexp.MustCompile(`^Act(\d+)V(\d+)\.(commands\.(\d+)|CUI|UIQ|UIA)$`)

func readScript(t testing.TB, name string) adlScript {
	var s adlScript
	last := ""
	for _, kv := range testenv.ADLProperties(t, filepath.Join(testenv.ADLCourses(t), "TestCases", name+".properties")) {
		if kv[0] == "start" {
			s.start = strings.TrimSpace(kv[1])
		}
		m := blockKey.FindStringSubmatch(kv[0])
		if m == nil {
			continue
		}
		// A key that comes back after another block is a new visit (some scripts
		// repeat Act1V1 for the second visit).
		key := "Act" + m[1] + "V" + m[2]
		if key != last {
			s.blocks = append(s.blocks, adlBlock{act: "activity_" + m[1]})
			last = key
		}
		i := len(s.blocks) - 1
		switch m[3] {
		case "CUI":
			s.blocks[i].cui = kv[1]
		case "UIQ":
			s.blocks[i].uiq = strings.Split(kv[1], "~")
		case "UIA":
			s.blocks[i].uia = strings.Split(kv[1], "~")
		default:
			n, _ := strconv.Atoi(m[4])
			for len(s.blocks[i].commands) <= n {
				s.blocks[i].commands = append(s.blocks[i].commands, "")
			}
			s.blocks[i].commands[n] = kv[1]
		}
	}
	return s
}

func parseADLPackage(t testing.TB, name string) *course.Package {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.ADLCourses(t), "LMSTestPackage_"+name, "imsmanifest.xml"))
	if err != nil {
		t.Fatalf("ADL test package: %v", err)
	}
	pkg, err := scorm.Parse(fstest.MapFS{"imsmanifest.xml": {Data: data}})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return pkg
}

// adlRun replays one test case and returns the problems found (nil when the sequencer
// behaved as the script says) and how many deliveries were checked.
//
// learner holds the learner's global objectives across packages: ADL's organizations leave
// objectivesGlobalToSystem at its default (true), and some cases (CO-07b, OB-09b) expect what
// the case before them wrote.
func adlRun(t testing.TB, name string, words map[string]string, learner Globals) (problems []string, checked int) {
	return adlReplay(t, name, words, learner, adlObserver{})
}

// adlObserver watches a replay: Begin gets the package before the first request, Delivered
// the State after each navigation request that delivered an activity or ended the session,
// Reported each SCO's outcome as the run-time stores it (an abandoned attempt's too: the
// run-time keeps the data the sequencer discards). Nil funcs are not called.
type adlObserver struct {
	Begin     func(pkg *course.Package)
	Delivered func(s *State, res Result)
	Reported  func(s *State, act string, rt RuntimeOutcome)
}

// adlReplay is adlRun with an observer.
func adlReplay(t testing.TB, name string, words map[string]string, learner Globals, obs adlObserver) (problems []string, checked int) {
	pkg := parseADLPackage(t, name)
	if obs.Begin != nil {
		obs.Begin(pkg)
	}
	delivered := func(s *State, res Result, err error) {
		if obs.Delivered != nil && err == nil && (res.Deliver != "" || res.SessionEnded) {
			obs.Delivered(s, res)
		}
	}
	script := readScript(t, name)
	actID := map[string]string{}
	actParam := regexp.MustCompile(`[?&]act=(\d+)(&|$)`)
	pkg.Root.Walk(func(a *course.Activity) {
		if m := actParam.FindStringSubmatch(a.LaunchURL); m != nil {
			actID["activity_"+m[1]] = a.ID
		}
	})
	for i, b := range script.blocks {
		if _, exact := s0(pkg, b.act); exact {
			continue
		}
		if id, ok := actID[b.act]; ok {
			script.blocks[i].act = id
		}
	}
	if len(script.blocks) == 0 {
		return []string{"no delivery blocks"}, 0
	}
	if x := pkg.Root.Extra; x != nil && x.ObjectivesGlobalToSystem != nil && !*x.ObjectivesGlobalToSystem {
		learner = nil // this course's global objectives are its own (kept in the State)
	}
	s, err := New(pkg, learner)
	if err != nil {
		return []string{err.Error()}, 0
	}
	word := func(k string) string {
		if v, ok := words[k]; ok {
			return v
		}
		return k
	}
	byTitle := func(title string) *Request {
		var r *Request
		pkg.Root.Walk(func(a *course.Activity) {
			if r == nil && strings.TrimSpace(a.Title) == title {
				r = &Request{Kind: Choice, Target: a.ID}
			}
		})
		return r
	}
	first := &Request{Kind: Start}
	if script.start != "." && script.start != "" {
		if first = byTitle(script.start); first == nil {
			return []string{"no activity titled " + script.start}, 0
		}
	}
	res, err := s.Navigate(*first)
	delivered(s, res, err)
	if err != nil || res.Deliver != script.blocks[0].act {
		return []string{fmt.Sprintf("start delivered %q (%v), want %s", res.Deliver, err, script.blocks[0].act)}, 0
	}
	checked++
	for i, b := range script.blocks {
		// "Is activity X selectable in the table of contents?" is what a choice request's
		// validity answers.
		for k, q := range b.uiq {
			title, ok := strings.CutPrefix(q, "toc.enabled.selectable@")
			if !ok || k >= len(b.uia) {
				continue
			}
			r := byTitle(title)
			if r == nil {
				continue
			}
			if got := s.NavigationRequestValid(*r); got != (b.uia[k] == "Y") {
				problems = append(problems, fmt.Sprintf("visit %d (%s): %s selectable = %v, want %s", i+1, b.act, title, got, b.uia[k]))
			}
		}
		var rt RuntimeOutcome
		var nav *Request
		for _, c := range b.commands {
			parts := strings.Split(c, "->")
			if len(parts) < 3 {
				continue
			}
			op, arg, want := parts[0], parts[1], parts[2]
			switch {
			case op == "GET" && strings.HasPrefix(arg, "a~n~rv~"):
				q := strings.TrimPrefix(arg, "a~n~rv~")
				var r Request
				switch {
				case q == "N.c":
					r = Request{Kind: Continue}
				case q == "N.p":
					r = Request{Kind: Previous}
				case strings.HasPrefix(q, "TY.c~tar~"):
					r = Request{Kind: Choice, Target: strings.TrimPrefix(q, "TY.c~tar~")}
				case strings.HasPrefix(q, "N.j~tar~"):
					r = Request{Kind: Jump, Target: strings.TrimPrefix(q, "N.j~tar~")}
				default:
					continue
				}
				if want != "t" && want != "f" {
					continue
				}
				if got := s.NavigationRequestValid(r); got != (want == "t") {
					problems = append(problems, fmt.Sprintf("visit %d (%s): request_valid %s %s = %v, want %v", i+1, b.act, r.Kind, r.Target, got, want == "t"))
				}
			case op == "SET" && want == "t":
				el, val, _ := strings.Cut(arg, "!")
				switch {
				case el == "c~CS":
					rt.CompletionStatus = word(val)
				case el == "c~SS":
					rt.SuccessStatus = word(val)
				case el == "c~S~SCA":
					if f, err := strconv.ParseFloat(val, 64); err == nil {
						rt.ScoreScaled = &f
					}
				case el == "c~PM":
					if f, err := strconv.ParseFloat(val, 64); err == nil {
						rt.ProgressMeasure = &f
					}
				case el == "c~X":
					rt.Exit = word(val)
				case el == "a~n~r":
					switch {
					case strings.HasPrefix(val, "tar~"):
						target, kind, _ := strings.Cut(strings.TrimPrefix(val, "tar~"), "~")
						k := Choice
						if kind == "N.j" {
							k = Jump
						}
						nav = &Request{Kind: k, Target: target}
					case word(val) == "_none_":
						nav = nil
					default:
						nav = &Request{Kind: Kind(word(val))}
					}
				case strings.HasPrefix(el, "c~OB~&"):
					id, field, _ := strings.Cut(strings.TrimPrefix(el, "c~OB~&"), "&~")
					if rt.Objectives == nil {
						rt.Objectives = map[string]ObjectiveOutcome{}
					}
					o := rt.Objectives[id]
					switch field {
					case "SS":
						o.SuccessStatus = word(val)
					case "S~SCA":
						if f, err := strconv.ParseFloat(val, 64); err == nil {
							o.ScoreScaled = &f
						}
					case "CS":
						o.CompletionStatus = word(val)
					case "PM":
						if f, err := strconv.ParseFloat(val, 64); err == nil {
							o.ProgressMeasure = &f
						}
					}
					rt.Objectives[id] = o
				}
			}
		}
		if nav == nil || (nav.Kind != Abandon && nav.Kind != AbandonAll) {
			// An abandoned attempt's data is discarded, not reported (ADL SX-04a/b).
			if err := s.Report(b.act, rt); err != nil {
				problems = append(problems, err.Error())
				return problems, checked
			}
		}
		if obs.Reported != nil {
			obs.Reported(s, b.act, rt)
		}
		if nav == nil && (rt.Exit == "time-out" || rt.Exit == "logout") {
			nav = &Request{Kind: ExitAll}
		}
		cuiNav := func() *Request {
			switch {
			case b.cui == "Continue":
				return &Request{Kind: Continue}
			case b.cui == "Previous":
				return &Request{Kind: Previous}
			case strings.HasPrefix(b.cui, "Choice~"):
				return byTitle(strings.TrimPrefix(b.cui, "Choice~"))
			case strings.HasPrefix(b.cui, "Suspend"):
				return &Request{Kind: SuspendAll} // the tester suspends, then relaunches
			}
			return nil
		}
		if n := cuiNav(); n != nil {
			// The tester's button wins over a request the SCO left pending.
			nav, b.cui = n, ""
		}
		if nav == nil {
			switch {
			case strings.HasPrefix(b.cui, "Choice~"):
				return append(problems, "no activity titled "+b.cui), checked
			case b.cui == "Exit" && i == len(script.blocks)-1:
				nav = &Request{Kind: ExitAll}
			default:
				return problems, checked // a step this harness does not script (relaunch, UI checks)
			}
		}
		res, err := s.Navigate(*nav)
		if err == nil && res.Deliver == "" && !res.SessionEnded {
			// The SCO's request delivered nothing (exit): the tester's button follows.
			if n := cuiNav(); n != nil {
				nav = n
				res, err = s.Navigate(*nav)
			}
		}
		delivered(s, res, err)
		if i == len(script.blocks)-1 {
			return problems, checked
		}
		next := script.blocks[i+1].act
		if err == nil && res.SessionEnded {
			// The tester launches the course again: the LMS resumes a suspended
			// session or starts a new one.
			again := Request{Kind: Start}
			if s.Suspended != "" {
				again.Kind = ResumeAll
			}
			nav = &again
			res, err = s.Navigate(again)
			delivered(s, res, err)
		}
		if err != nil || res.Deliver != next {
			problems = append(problems, fmt.Sprintf("visit %d (%s): %s %s delivered %q (%v), want %s", i+1, b.act, nav.Kind, nav.Target, res.Deliver, err, next))
			return problems, checked
		}
		checked++
	}
	return problems, checked
}

func commandWords(t testing.TB) map[string]string {
	words := map[string]string{}
	for _, kv := range testenv.ADLProperties(t, testenv.ADLResource(t, "Commands.properties")) {
		words[kv[0]] = kv[1]
	}
	return words
}

// TestADLSurvey replays every sequencing, rollup and objectives case and logs the result;
// it fails only for the cases listed in adlPassing (the ones this increment must keep
// passing), so the survey shows progress without failing on work not done yet.
func TestADLSurvey(t *testing.T) {
	words := commandWords(t)
	pass, total := 0, 0
	learner := MapGlobals{}
	var failing []string
	for _, name := range adlCaseNames(t) {
		total++
		problems, checked := adlRun(t, name, words, learner)
		if len(problems) == 0 {
			pass++
			t.Logf("%s: ok (%d deliveries)", name, checked)
			continue
		}
		failing = append(failing, name)
		t.Logf("%s: %s", name, strings.Join(problems, "; "))
		if slices.Contains(adlPassing, name) {
			t.Errorf("%s regressed: %s", name, strings.Join(problems, "; "))
		}
	}
	t.Logf("ADL cases replayed without a problem: %d of %d; others: %v", pass, total, failing)
}

// adlPassing are the ADL cases the sequencer replays correctly today (every delivery the
// script states, and every request_valid answer it checks, up to the first step the harness
// cannot script: relaunches, UI questions). A case that stops passing fails the test.
var adlPassing = []string{
	"CM-01", "CM-02a", "CM-02b", "CM-03a", "CM-03b", "CM-04a", "CM-04c", "CM-04d", "CM-05", "CM-06",
	"CM-07a", "CM-07b", "CM-07c", "CM-07d", "CM-07e", "CM-07f", "CM-08", "CM-09aa", "CM-09ab", "CM-09bb",
	"CM-09ca", "CM-09cb", "CM-11", "CM-13", "CM-14", "CM-15", "CM-16", "CM-17a", "CM-17b", "CO-01",
	"CO-02a", "CO-02b", "CO-03", "CO-04a", "CO-04b", "CO-04c", "CO-05a", "CO-05b", "CO-06", "CO-07a",
	"CO-07b", "CO-08a", "CO-08b", "CO-09", "CO-10", "CO-11", "CO-12a", "CO-12b", "CO-12c", "CO-12d",
	"CO-13a", "CO-13b", "CT-01", "CT-02", "CT-03", "CT-04", "CT-05", "CT-06", "CT-07", "MS-01",
	"MS-02", "MS-03", "MS-04", "MS-05a", "MS-05b", "MS-06", "OB-01a", "OB-01b", "OB-01c", "OB-02a", "OB-02b", "OB-03a", "OB-03b",
	"OB-03c", "OB-04", "OB-05a", "OB-05b", "OB-05c", "OB-06", "OB-07a", "OB-07b", "OB-08a", "OB-08b",
	"OB-09a", "OB-09b", "OB-10a", "OB-10b", "OB-10c", "OB-10d", "OB-11a", "OB-11b", "OB-12a",
	"OB-12b", "OB-12c", "OB-13a", "OB-13b", "OB-13c", "OB-14a", "OB-14b", "OB-15", "OB-16a", "OB-16b",
	"OB-16c", "OB-16d", "OB-17a", "OB-17b", "RU-01aa", "RU-01ab", "RU-01ba", "RU-01bb", "RU-02a",
	"RU-02b", "RU-03a", "RU-03b", "RU-04aa", "RU-04ab", "RU-04ba", "RU-04bb", "RU-04bc", "RU-04bd", "RU-05a",
	"RU-05b", "RU-06a", "RU-06b", "RU-07a", "RU-07b", "RU-07c", "RU-08a", "RU-08b", "RU-09", "RU-10",
	"RU-11", "RU-12a", "RU-12b", "RU-13a", "RU-13b", "RU-13c", "RU-13d", "RU-13e", "RU-14a", "RU-14b", "RU-14c",
	"RU-14d", "RU-15a", "RU-15b", "RU-15c", "RU-15d", "RU-16", "RU-17a", "RU-17b", "RU-18a", "RU-18b", "RU-19a",
	"RU-19b", "SX-02", "SX-03", "SX-04a", "SX-05", "SX-06", "SX-07a", "SX-07b", "SX-07c", "SX-07d",
	"SX-07e", "SX-08a", "SX-08b", "SX-09", "SX-10a", "SX-10b", "SX-10c", "SX-10d", "SX-11a", "SX-11b",
	"SX-11c", "SX-12a", "SX-12b", "SX-12c", "T-01a", "T-01b",
}

// adlCaseNames lists the sequencing, rollup and objectives cases of ADL's suite that have a
// script, in the suite's order.
func adlCaseNames(t testing.TB) []string {
	entries, err := os.ReadDir(testenv.ADLCourses(t))
	if err != nil {
		t.Fatalf("ADL test suite: %v", err)
	}
	var names []string
	for _, e := range entries {
		name, ok := strings.CutPrefix(e.Name(), "LMSTestPackage_")
		if !ok || !strings.ContainsAny(name[:1], "CORSMNT") || strings.HasPrefix(name, "DM") {
			continue
		}
		if _, err := os.Stat(filepath.Join(testenv.ADLCourses(t), "TestCases", name+".properties")); err != nil {
			continue
		}
		names = append(names, name)
	}
	return names
}

// s0 reports whether the package has an activity with the id.
func s0(pkg *course.Package, id string) (*course.Activity, bool) {
	var found *course.Activity
	pkg.Root.Walk(func(a *course.Activity) {
		if a.ID == id {
			found = a
		}
	})
	return found, found != nil
}
