package server_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
	"github.com/lectern-lms/lectern/internal/testenv"
)

// ADL's SCORM 2004 4th edition LMS run-time test cases, run in Chromium against the player
// (issue 24, "Proof"). Each case's TestCases/<case>.properties scripts what the test SCO of
// each delivery calls (one block per delivery: "Act3V2" is the second visit of the item whose
// launch parameters say act=3), the questions about the LMS's controls (UIQ, answers UIA) and
// what the tester presses afterwards (CUI). The order of the blocks is the delivery order the
// LMS must produce. course/sequencing's TestADLSurvey replays the same scripts against the
// sequencer alone; this test runs them through the whole product: import, launch, the
// player page, scorm-again, the runtime endpoints and the learner's path.

// lmsVisit is one block of a script: one delivery of an activity.
type lmsVisit struct {
	act      string // N of the launch parameter act=N ("1a": activity 1 of package <case>a)
	key      string // "Act3V2"
	commands []string
	cui      string
	uiq, uia []string
}

type lmsScript struct {
	start  string // "." for the LMS's own start, else the title the tester chooses first
	visits []lmsVisit
}

var lmsBlockKey = regexp.MustCompile(`^Act(\d+[a-z]?)V(\d+)\.(commands\.\d+|CUI|UIQ|UIA)$`)

func readLMSScript(t testing.TB, name string) lmsScript {
	var s lmsScript
	last := ""
	for _, kv := range testenv.ADLProperties(t, filepath.Join(testenv.ADLCourses(t), "TestCases", name+".properties")) {
		if kv[0] == "start" {
			s.start = strings.TrimSpace(kv[1])
		}
		m := lmsBlockKey.FindStringSubmatch(kv[0])
		if m == nil {
			continue
		}
		// A key that comes back after another block is a new visit (some scripts repeat
		// Act1V1 for the second visit).
		key := "Act" + m[1] + "V" + m[2]
		if key != last {
			s.visits = append(s.visits, lmsVisit{act: m[1], key: key})
			last = key
		}
		v := &s.visits[len(s.visits)-1]
		switch m[3] {
		case "CUI":
			v.cui = strings.TrimSpace(kv[1])
		case "UIQ":
			v.uiq = strings.Split(kv[1], "~")
		case "UIA":
			v.uia = strings.Split(kv[1], "~")
		default:
			// In file order, whatever the index says, as the applet's LMSTestCaseGenerator
			// reads them: a few scripts repeat an index (CO-10's Act1V1.commands.13 is both
			// the continue request and cmi.exit).
			v.commands = append(v.commands, kv[1])
		}
	}
	return s
}

// lmsCall is one API call the test SCO makes (sco.html's __adlRun), with what the script
// expects back.
type lmsCall struct {
	Op   string `json:"op"`
	El   string `json:"el"`
	Val  string `json:"val"` // "" too: SetValue(el, "") is not SetValue(el)
	want string // the value (GET, GES, GeDi, GLE) or return ("true"/"false") expected
	code string // GetLastError expected after the call
	typ  string // the interaction type a GET of a response or pattern is compared as
	ids  []string
}

// lmsWords turns the scripts' abbreviations into data model names and values
// (resources/.../Commands.properties: "c~CS" is cmi.completion_status, "comp" completed).
type lmsWords map[string]string

func (w lmsWords) word(k string) string {
	if v, ok := w[k]; ok {
		return v
	}
	return k
}

// element is the data model element of "c~OB~&obj1&~S~SCA" or "a~n~rv~TY.c~tar~activity_3"
// ("tar" takes the next part as the target, as the applet's LMSParser does).
func (w lmsWords) element(s string) string {
	parts := strings.Split(s, "~")
	var out []string
	for i := 0; i < len(parts); i++ {
		if parts[i] == "tar" && i+1 < len(parts) {
			out = append(out, "{target="+parts[i+1]+"}")
			i++
			continue
		}
		out = append(out, w.word(parts[i]))
	}
	return strings.Join(out, ".")
}

// value is a SetValue value: a word, a literal, or "tar~activity_6~TY.c" for
// "{target=activity_6}choice".
func (w lmsWords) value(s string) string {
	parts := strings.Split(s, "~")
	if len(parts) == 1 {
		return w.word(s)
	}
	var b strings.Builder
	for i := 0; i < len(parts); i++ {
		if parts[i] == "tar" && i+1 < len(parts) {
			b.WriteString("{target=" + parts[i+1] + "}")
			i++
			continue
		}
		b.WriteString(w.word(parts[i]))
	}
	return b.String()
}

// calls translates a visit's commands ("SET->c~CS!comp->t->0").
func (w lmsWords) calls(commands []string) []lmsCall {
	out := []lmsCall{}
	for _, c := range commands {
		f := strings.Split(c, "->")
		if len(f) < 2 {
			continue
		}
		for len(f) < 4 {
			f = append(f, "")
		}
		code := f[len(f)-1]
		want := strings.Join(f[2:len(f)-1], "->")
		call := lmsCall{Op: f[0], code: code}
		switch f[0] {
		case "GET", "SET", "COI", "I", "T", "C", "GES", "GeDi", "GLE":
		default:
			// LMSParser.parseCommands skips a line of no known call (DMI's Act3V2.commands.47
			// lost its "GET->").
			continue
		}
		switch f[0] {
		case "SET":
			// The return is the last field before the error code, as the applet's LMSParser
			// reads it (DDM's Act1aV1.commands.3 has a stray "0" field before it).
			el, val, _ := strings.Cut(f[1], "!")
			call.El, call.Val, call.want = w.element(el), w.value(val), w.word(f[len(f)-2])
		case "GET":
			el := f[1]
			if strings.Contains(el, "~INTR~") {
				// "c~INTR~6~CR~0~P!TY.m": the part after "!" is the interaction type the
				// applet compares the value as (LMSParser.parseGetCommandsDMParams), not
				// part of the element.
				parts := strings.Split(el, "~")
				for i, p := range parts {
					if name, typ, ok := strings.Cut(p, "!"); ok {
						parts[i], call.typ = name, w.word(typ)
					}
				}
				el = strings.Join(parts, "~")
			}
			call.El, call.want = w.element(el), w.word(want)
		case "COI":
			call.El, call.ids = f[1], strings.Split(f[1], ",")
		case "I", "T", "C":
			call.El, call.want = f[1], w.word(want)
		default: // GES, GeDi, GLE
			call.El, call.want = f[1], want
		}
		out = append(out, call)
	}
	return out
}

// lmsResult is what sco.html reports for one call.
type lmsResult struct {
	El      string   `json:"el"`
	Ret     string   `json:"ret"`
	Code    string   `json:"code"`
	Missing bool     `json:"missing"`
	IDs     []string `json:"ids"`
	Unknown string   `json:"unknown"`
	Threw   string   `json:"threw"`
}

// lmsSame compares a returned value with the expected one as the applet's evaluator does for
// typed elements: reals by value, durations by length, anything else as text.
func lmsSame(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	if err1 == nil && err2 == nil {
		return g == w
	}
	gd, ok1 := isoSeconds(got)
	wd, ok2 := isoSeconds(want)
	return ok1 && ok2 && gd == wd
}

// lmsSameLang compares two localized strings ("{lang=xx}text") as SCORM_2004_DMElement.equals
// does: the same text, and the same language where "en" is the one given by none.
func lmsSameLang(got, want string) bool {
	split := func(s string) (string, string) {
		if rest, ok := strings.CutPrefix(s, "{lang="); ok {
			if lang, text, ok := strings.Cut(rest, "}"); ok {
				return strings.ToLower(lang), text
			}
		}
		return "en", s
	}
	gl, gt := split(got)
	wl, wt := split(want)
	return gt == wt && gl == wl
}

// lmsResponseEl is an interaction's learner_response or a correct response's pattern.
var lmsResponseEl = regexp.MustCompile(`^cmi\.interactions\.\d+\.(learner_response|correct_responses\.\d+\.pattern)$`)

// lmsResponseDelims are the delimiters an interaction type's learner_response or pattern
// takes and their defaults (SCORM_2004_DMElement.handleLearnerResponse and
// handleCorrectResponses).
func lmsResponseDelims(typ string, pattern bool) map[string]string {
	switch {
	case typ == "long-fill-in" && !pattern:
		return map[string]string{"lang": "en"}
	case typ == "fill-in" && pattern:
		return map[string]string{"case_matters": "false", "order_matters": "true"}
	case typ == "long-fill-in" && pattern:
		return map[string]string{"case_matters": "false", "lang": "en"}
	case typ == "performance" && pattern:
		return map[string]string{"order_matters": "true"}
	}
	return nil
}

// lmsSameResponse compares an interaction's learner_response or correct response pattern
// as the applet's evaluator does (SCORM_2004_DMElement.equals, then
// InteractionValidator.compare for the type): the leading delimiters the element takes,
// each given or its default, are the same, and the rest is the same response for the type
// (choices as a set, fill-in text by its case_matters and order_matters, numbers by value).
// So "{order_matters=true}z" is the "z" a fill-in pattern was set to.
func lmsSameResponse(typ string, pattern bool, got, want string) bool {
	known := lmsResponseDelims(typ, pattern)
	split := func(v string) (map[string]string, string) {
		vals := map[string]string{}
		for strings.HasPrefix(v, "{") {
			end := strings.Index(v, "}")
			if end < 0 {
				break
			}
			name, val, ok := strings.Cut(v[1:end], "=")
			if _, k := known[name]; !ok || !k || vals[name] != "" {
				break
			}
			vals[name] = val
			v = v[end+1:]
		}
		for name, def := range known {
			if vals[name] == "" {
				vals[name] = def
			}
		}
		return vals, v
	}
	gd, g := split(got)
	wd, w := split(want)
	for name := range known {
		if name == "lang" && !lmsSameLangCode(gd[name], wd[name]) || name != "lang" && gd[name] != wd[name] {
			return false
		}
	}
	caseMatters, orderMatters := wd["case_matters"] == "true", wd["order_matters"] != "false"
	list := func(v string) []string { return strings.Split(v, "[,]") }
	sameReal := func(a, b string) bool {
		x, err1 := strconv.ParseFloat(strings.TrimSpace(a), 64)
		y, err2 := strconv.ParseFloat(strings.TrimSpace(b), 64)
		return err1 == nil && err2 == nil && math.Floor(x*1e6) == math.Floor(y*1e6)
	}
	// sameAsSet: the same items, each matched once, in any order.
	sameAsSet := func(a, b []string, same func(x, y string) bool) bool {
		if len(a) != len(b) {
			return false
		}
		used := make([]bool, len(b))
	next:
		for _, x := range a {
			for j, y := range b {
				if !used[j] && same(x, y) {
					used[j] = true
					continue next
				}
			}
			return false
		}
		return true
	}
	switch typ {
	case "choice":
		gs, ws := map[string]bool{}, map[string]bool{}
		for _, c := range list(g) {
			gs[c] = true
		}
		for _, c := range list(w) {
			ws[c] = true
		}
		return maps.Equal(gs, ws)
	case "fill-in":
		text := func(x, y string) bool {
			lang := func(t string) (string, string) {
				if rest, ok := strings.CutPrefix(t, "{lang="); ok {
					if l, v, ok := strings.Cut(rest, "}"); ok {
						return l, v
					}
				}
				return "en", t
			}
			xl, xt := lang(x)
			yl, yt := lang(y)
			return lmsSameLangCode(xl, yl) && (xt == yt || !caseMatters && strings.EqualFold(xt, yt))
		}
		gl, wl := list(g), list(w)
		if !orderMatters {
			return sameAsSet(wl, gl, text)
		}
		if len(gl) != len(wl) {
			return false
		}
		for i := range gl {
			if !text(gl[i], wl[i]) {
				return false
			}
		}
		return true
	case "long-fill-in":
		return g == w || !caseMatters && strings.EqualFold(g, w)
	case "performance":
		if !orderMatters {
			return sameAsSet(list(w), list(g), func(x, y string) bool { return x == y })
		}
		return g == w
	case "numeric":
		if !pattern {
			return sameReal(g, w)
		}
		gmin, gmax, ok1 := strings.Cut(g, "[:]")
		wmin, wmax, ok2 := strings.Cut(w, "[:]")
		if !ok1 || !ok2 {
			return g == w
		}
		same := func(a, b string) bool {
			return strings.TrimSpace(a) == "" && strings.TrimSpace(b) == "" || sameReal(a, b)
		}
		return same(gmin, wmin) && same(gmax, wmax)
	}
	// true-false, likert, matching (the applet pairs them in order), sequencing, other.
	return g == w
}

// lmsSameLangCode compares two language codes as LangStringValidator.compare does for the
// codes the suite uses: without regard to case.
func lmsSameLangCode(a, b string) bool { return strings.EqualFold(a, b) }

var isoDuration = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// isoSeconds is an ISO 8601 duration in seconds (a year 365 days, a month 30, which is
// enough to compare two spellings of the same duration).
func isoSeconds(s string) (float64, bool) {
	m := isoDuration.FindStringSubmatch(s)
	if m == nil || s == "P" {
		return 0, false
	}
	mult := []float64{365 * 86400, 30 * 86400, 86400, 3600, 60, 1}
	total := 0.0
	for i, v := range m[1:] {
		if v != "" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f * mult[i]
		}
	}
	return total, true
}

// check compares the SCO's results with the calls' expectations.
func (c lmsCall) check(r lmsResult) string {
	switch {
	case r.Unknown != "":
		return "the SCO does not know call " + r.Unknown
	case r.Threw != "":
		return fmt.Sprintf("%s(%s) threw %s", c.Op, r.El, r.Threw)
	case r.Missing:
		return fmt.Sprintf("%s: no objective or shared data store of that id", c.El)
	case c.Op == "COI":
		got, want := slices.Clone(r.IDs), slices.Clone(c.ids)
		sort.Strings(got)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			return fmt.Sprintf("objective ids %v, want %v", r.IDs, c.ids)
		}
		return ""
	}
	var bad []string
	switch {
	case c.Op == "GES" || c.Op == "GeDi":
		if (c.want == "less255" && len(r.Ret) >= 255) || (c.want == "emptyCS" && r.Ret != "") {
			bad = append(bad, fmt.Sprintf("returned %q, want %s", r.Ret, c.want))
		}
	case c.Op == "GET" && c.want == "" && strings.HasPrefix(c.El, "cmi.objectives.&") && strings.HasSuffix(c.El, "&.id"):
		// The applet's "&obj&.id" without a value: the id found must be obj.
		if id := strings.TrimSuffix(strings.TrimPrefix(c.El, "cmi.objectives.&"), "&.id"); r.Ret != id {
			bad = append(bad, fmt.Sprintf("returned %q, want %q", r.Ret, id))
		}
	case c.Op == "GET" && strings.Contains(c.El, "request_valid"):
		if r.Ret != c.want {
			bad = append(bad, fmt.Sprintf("returned %q, want %q", r.Ret, c.want))
		}
	case c.Op == "GET" && strings.Contains(c.El, "learner_name"):
		// The applet's TestCaseEvaluator checks only the error code of learner_name (the LMS
		// may present the name as it likes).
	case c.Op == "GET" && strings.Contains(c.El, "comments_from_lms") && !strings.Contains(c.El, "_children"):
		// evaluateGetCommentsFromLMS: any value, with no error, 301 or 122 (401 for the
		// container itself); the manifest's comments are the LMS's to give or not.
		ok := r.Code == "0" || r.Code == "301" || r.Code == "122" || (c.El == "cmi.comments_from_lms" && r.Code == "401")
		if !ok {
			return fmt.Sprintf("GET(%s) error %s, want a valid value or error code", r.El, r.Code)
		}
		return ""
	case c.Op == "GET" && strings.HasSuffix(c.El, "._children") && c.want != "":
		// Children.equals: the same names in any order.
		g, w := strings.Split(r.Ret, ","), strings.Split(c.want, ",")
		sort.Strings(g)
		sort.Strings(w)
		if !slices.Equal(g, w) {
			bad = append(bad, fmt.Sprintf("returned %q, want %q", r.Ret, c.want))
		}
	case c.Op == "GET" && c.typ != "" && lmsResponseEl.MatchString(c.El) && (c.want != "" || strings.HasPrefix(r.Ret, "{")):
		if !lmsSameResponse(c.typ, strings.HasSuffix(c.El, ".pattern"), r.Ret, c.want) {
			bad = append(bad, fmt.Sprintf("returned %q, want %q (as %s)", r.Ret, c.want, c.typ))
		}
	case c.Op == "GET" && !strings.Contains(c.El, "_count") && (c.want != "" || strings.HasPrefix(r.Ret, "{")) && lmsSameLang(r.Ret, c.want):
		// A localized string compared as the data model does: {lang=en} is the default
		// language, the same as none.
	case !lmsSame(r.Ret, c.want):
		bad = append(bad, fmt.Sprintf("returned %q, want %q", r.Ret, c.want))
	}
	if r.Code != c.code {
		bad = append(bad, fmt.Sprintf("error %s, want %s", r.Code, c.code))
	}
	if len(bad) == 0 {
		return ""
	}
	call := c.Op + "(" + r.El
	if c.Op == "SET" {
		call += ", " + c.Val
	}
	return call + ") " + strings.Join(bad, ", ")
}

// lmsManifest is what the package builder needs of a manifest: its files.
type lmsManifest struct {
	Base      string `xml:"http://www.w3.org/XML/1998/namespace base,attr"`
	Resources struct {
		Base      string `xml:"http://www.w3.org/XML/1998/namespace base,attr"`
		Resources []struct {
			Base  string `xml:"http://www.w3.org/XML/1998/namespace base,attr"`
			Href  string `xml:"href,attr"`
			Files []struct {
				Href string `xml:"href,attr"`
			} `xml:"file"`
		} `xml:"resource"`
	} `xml:"resources"`
}

// lmsPackage assembles a test package as the suite's buildTestPackages.xml does, with Lectern's
// own files: the manifest from LMSTestPackage_<name>, the test SCO (testdata/adl-sco/sco.html)
// for every HTML page it names (each named after the suite's SCO it replaces, which picks its
// behaviour), and an empty stand-in for the applet's scripts, jar and style sheet, which the
// test SCO does not need.
func lmsPackage(t *testing.T, name string, sco []byte) []byte {
	t.Helper()
	manifest, err := os.ReadFile(filepath.Join(testenv.ADLCourses(t), "LMSTestPackage_"+name, "imsmanifest.xml"))
	if err != nil {
		t.Fatalf("ADL test package: %v", err)
	}
	var m lmsManifest
	if err := xml.Unmarshal(manifest, &m); err != nil {
		t.Fatalf("manifest of %s: %v", name, err)
	}
	files := map[string]string{"imsmanifest.xml": string(manifest)}
	add := func(p string) {
		p = path.Clean(strings.TrimPrefix(p, "/"))
		if p == "." || strings.HasPrefix(p, "..") {
			return
		}
		if ext := strings.ToLower(path.Ext(p)); ext == ".htm" || ext == ".html" {
			files[p] = string(sco)
		} else if _, ok := files[p]; !ok {
			files[p] = ""
		}
	}
	for _, r := range m.Resources.Resources {
		base := m.Base + m.Resources.Base + r.Base
		if r.Href != "" {
			add(base + r.Href)
		}
		for _, f := range r.Files {
			add(base + f.Href)
		}
	}
	return zipOf(t, files)
}

// lmsPackages are the test packages of case name: LMSTestPackage_<name>, or, for a script
// that runs through several packages (DDM: DDMa and DDMb, one learner taking both, as the
// script's visits Act1a… and Act1b… say), LMSTestPackage_<name>a, <name>b… in order; none
// when the suite has no package for the script.
func lmsPackages(t testing.TB, name string) []string {
	has := func(p string) bool {
		_, err := os.Stat(filepath.Join(testenv.ADLCourses(t), "LMSTestPackage_"+p, "imsmanifest.xml"))
		return err == nil
	}
	if has(name) {
		return []string{name}
	}
	var out []string
	for c := 'a'; c <= 'z' && has(name+string(c)); c++ {
		out = append(out, name+string(c))
	}
	return out
}

// lmsCases are the suite's LMS run-time cases: every script with its test packages
// (lmsPackages).
func lmsCases(t testing.TB) []string {
	entries, err := os.ReadDir(filepath.Join(testenv.ADLCourses(t), "TestCases"))
	if err != nil {
		t.Fatalf("ADL test suite: %v", err)
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".properties")
		if !ok {
			continue
		}
		if len(lmsPackages(t, name)) > 0 {
			out = append(out, name)
		}
	}
	return out
}

// adlBrowser is browser's Chromium with room for the whole suite (browser's context gives a
// test 90 seconds).
func adlBrowser(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (scripts/install-chromium.sh)")
		}
		t.Skip("Chromium is not installed (scripts/install-chromium.sh)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(p), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()), chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, d)
	t.Cleanup(func() { cancelTimeout(); cancel(); cancelAlloc() })
	return ctx
}

// lmsPage is what the test reads of the player page: the test SCO's loads and the page's
// message ("You have finished this course", "This is not possible now: …").
type lmsPage struct {
	Loads []struct {
		Act, File, Tc string
		API           bool
	} `json:"loads"`
	Done string `json:"done"`
}

const lmsPageJS = `JSON.stringify({loads: window.__adl || [], done: document.getElementById("done").hidden ? "" : document.getElementById("done").textContent})`

// lmsRunner runs cases in one browser tab against one Lectern.
type lmsRunner struct {
	t     *testing.T
	e     *env
	ctx   context.Context
	words lmsWords
	// instructions are the tester's instructions by CUI key (Instructions.properties).
	instructions map[string]string
	sco          []byte
	// rc receives each registration's FULL post-backs, at /<tenant>/<registration id>.
	rc *servertest.PostReceiver
}

var (
	// lmsLaunchTitle is an instruction to launch an activity of the running course by its
	// title ("please launch <b>API Implementation Test 1</b>"): a choice in the contents.
	lmsLaunchTitle = regexp.MustCompile(`please launch <b>([^<]+)</b>`)
	// lmsChooseTitle is an instruction to choose an activity after relaunching the course
	// ("relaunch … and then choose <b>Activity 4</b>").
	lmsChooseTitle = regexp.MustCompile(`choose <b>([^<]+)</b>`)
)

// afterRequest is the control the tester presses once the SCO's own request took it away
// and delivered nothing: the visit's Continue, Previous or choice, or the activity its
// instruction says to choose while the session stays ("choose <b>the activity that
// corresponds to the root of …</b>", ADL SX-04b); "" when the instruction asks for neither.
func (r *lmsRunner) afterRequest(v lmsVisit) string {
	if v.cui == "Continue" || v.cui == "Previous" || strings.HasPrefix(v.cui, "Choice~") {
		return v.cui
	}
	if text := r.instructions[v.cui]; !strings.Contains(text, "relaunch") {
		if m := lmsChooseTitle.FindStringSubmatch(text); m != nil {
			return "Choice~" + m[1]
		}
	}
	return ""
}

// afterRelaunch is the title the tester chooses once the course is launched again, as the
// visit's instruction says ("" when it says nothing more than relaunch).
func (r *lmsRunner) afterRelaunch(v lmsVisit) string {
	if m := lmsChooseTitle.FindStringSubmatch(r.instructions[v.cui]); m != nil {
		return m[1]
	}
	return ""
}

func (r *lmsRunner) eval(js string, out any) error {
	var s string
	var err error
	for range 100 {
		if s, err = chromedp.Run(r.ctx, chromedp.Evaluate[string](js)); err == nil || !servertest.Navigating(err) {
			break
		}
		time.Sleep(20 * time.Millisecond) // the page is being replaced: ask the next one
	}
	if err != nil {
		return err
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal([]byte(s), out)
}

func (r *lmsRunner) page() (lmsPage, error) {
	var p lmsPage
	err := r.eval(lmsPageJS, &p)
	return p, err
}

// next waits for the page to load another SCO than the loads it had (seen) or to show its
// message; it returns the page as it is when the wait ends.
func (r *lmsRunner) next(seen int) (lmsPage, error) {
	deadline := time.Now().Add(15 * time.Second)
	for {
		p, err := r.page()
		if err != nil || len(p.Loads) > seen || p.Done != "" || time.Now().After(deadline) {
			return p, err
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// clearMessage hides the page's message, so the next one is new.
func (r *lmsRunner) clearMessage() error {
	return r.eval(`document.getElementById("done").hidden = true, "null"`, nil)
}

// launch opens a new launch of the registration (the tester launching the course again).
func (r *lmsRunner) launch(regs, reg string) error {
	_, err := chromedp.Run(r.ctx, chromedp.Navigate(r.e.url+r.e.launchPath(regs+"/"+reg+"/launchLink")))
	return err
}

// control is the state of a player control: "missing", "hidden", "disabled" or "enabled".
func (r *lmsRunner) control(js string) string {
	s := "missing"
	_ = r.eval(`(function(){var b=`+js+`;return JSON.stringify(!b?"missing":b.hidden||(b.parentElement&&b.parentElement.hidden)?"hidden":b.disabled?"disabled":"enabled")})()`, &s)
	return s
}

// lmsRootOf is how the scripts name the root activity: "the activity that corresponds to the
// root of "<the organization's title>""; the tester finds it by that title.
var lmsRootOf = regexp.MustCompile(`^the activity that corresponds to the root of "(.*)"$`)

// tocEntry finds the table of contents' entry of the activity the script names by its title.
func tocEntry(title string) string {
	if m := lmsRootOf.FindStringSubmatch(title); m != nil {
		title = strings.TrimSpace(m[1])
	}
	q, _ := json.Marshal(title)
	return `Array.from(document.querySelectorAll("#toc button, #toc div")).filter(function(b){return b.textContent.trim()===` + string(q) + `})[0]`
}

// press presses a control of the player for the tester; "" when it could, else why not.
func (r *lmsRunner) press(what string) string {
	var js string
	switch {
	case what == "Continue":
		js = `document.getElementById("next")`
	case what == "Previous":
		js = `document.getElementById("prev")`
	case what == "Exit":
		js = `document.getElementById("exit")`
	case what == "Suspend":
		js = `document.getElementById("suspend")`
	case strings.HasPrefix(what, "Choice~"):
		js = tocEntry(strings.TrimPrefix(what, "Choice~"))
	default:
		return "no control for " + what
	}
	if st := r.control(js); st != "enabled" {
		return fmt.Sprintf("%s is %s", what, st)
	}
	if err := r.eval(`(`+js+`).click(), "null"`, nil); err != nil {
		return err.Error()
	}
	return ""
}

// questions answers the visit's questions about the player's controls (UIQ) and returns
// the ones whose answer is not the script's (UIA). Questions about other things (click.button,
// toc.enabled without an activity) are not asked.
func (r *lmsRunner) questions(v lmsVisit) []string {
	var bad []string
	for k, q := range v.uiq {
		if k >= len(v.uia) {
			break
		}
		var got bool
		switch {
		case strings.HasPrefix(q, "toc.enabled.selectable@"):
			got = r.control(tocEntry(strings.TrimPrefix(q, "toc.enabled.selectable@"))) == "enabled"
		case strings.HasPrefix(q, "toc.visible@"):
			st := r.control(tocEntry(strings.TrimPrefix(q, "toc.visible@")))
			got = st == "enabled" || st == "disabled"
		case q == "continue.enabled" || q == "continue.disabled":
			got = (r.control(`document.getElementById("next")`) == "enabled") == (q == "continue.enabled")
		case q == "previous.enabled" || q == "previous.disabled":
			got = (r.control(`document.getElementById("prev")`) == "enabled") == (q == "previous.enabled")
		default:
			continue
		}
		if got != (strings.TrimSpace(v.uia[k]) == "Y") {
			bad = append(bad, fmt.Sprintf("%s: %s is %v, want %s", v.key, q, got, v.uia[k]))
		}
	}
	return bad
}

// lmsLearner is the learner the tester establishes for the suite (LearnerIDStep.htm asks
// for two; this harness registers one and plays every case as it). The applet expects a GET of
// cmi.learner_id or cmi.learner_name to return what the tester typed in, whatever the script
// says (LMSParser.getLearnerInfoForResultValue replaces the script's placeholder), so the name
// is as the LMS presents it: SCORM's "family, given" (learner/launch.go).
type lmsLearner struct{ id, first, last, name string }

var adlLearner = lmsLearner{id: "adl-learner", first: "Ann", last: "Lee", name: "Lee, Ann"}

// identify gives the calls that read the learner's identity the tester's values.
func (l lmsLearner) identify(calls []lmsCall) {
	for k, c := range calls {
		switch {
		case c.Op != "GET":
		case c.El == "cmi.learner_id":
			calls[k].want = l.id
		case c.El == "cmi.learner_name":
			calls[k].want = l.name
		}
	}
}

// lmsStays are the suite's SCOs that terminate only when the LMS takes them away.
var lmsStays = map[string]bool{"exitAllOnUnload.htm": true, "suspendAllOnUnload.htm": true, "tarAct4OnUnload.htm": true, "SequencingTestSingleDoTerminate.htm": true}

// run plays one case; it returns the problems (nil: the case passes) and how many
// deliveries were as the script says.
func (r *lmsRunner) run(name, tenant string, learner lmsLearner) (problems []string, delivered int) {
	t, e := r.t, r.e
	script := readLMSScript(t, name)
	if len(script.visits) == 0 {
		return []string{"the script has no deliveries"}, 0
	}
	// Each package is a course with a registration of the learner; a script that runs
	// through several (DDM) names the package of each visit by its activity's letter.
	packages := lmsPackages(t, name)
	regs := "/engine/api/v1/" + tenant + "/registrations"
	regOf := map[string]string{}
	for _, pkg := range packages {
		res := e.WaitJob(tenant, e.Upload(tenant, "course="+strings.ToLower(pkg), lmsPackage(t, pkg, r.sco), "course.zip"))
		if res.Status != "COMPLETE" {
			return []string{fmt.Sprintf("import of %s: %+v", pkg, res)}, 0
		}
		regOf[pkg] = "r-" + strings.ToLower(pkg)
		e.expect(e.do("POST", regs, root, map[string]any{"courseId": strings.ToLower(pkg), "registrationId": regOf[pkg],
			"learner":  map[string]any{"id": learner.id, "firstName": learner.first, "lastName": learner.last},
			"postBack": map[string]any{"url": r.rc.URL("/" + tenant + "/" + regOf[pkg]), "authType": "HTTPBASIC", "resultsFormat": "FULL"}}), 204, "registration for "+pkg)
	}
	packageOf := func(v lmsVisit) string {
		if len(packages) == 1 {
			return packages[0]
		}
		return name + strings.TrimLeft(v.act, "0123456789")
	}
	cur := packageOf(script.visits[0])
	if slices.Contains(packages, script.start) {
		// The script starts by launching one of its packages (DDM: start=DDMa), whose
		// course then starts as the LMS starts it.
		cur, script.start = script.start, "."
	}
	reg := regOf[cur]
	if err := r.launch(regs, reg); err != nil {
		return []string{"launch: " + err.Error()}, 0
	}
	seen := 0
	p, err := r.next(0)
	if err != nil {
		return []string{err.Error()}, 0
	}
	if script.start != "." && script.start != "" {
		// The tester starts with a choice in the table of contents (the course may have
		// delivered its first activity already, or said that nothing can start).
		seen = len(p.Loads)
		_ = r.clearMessage()
		if why := r.press("Choice~" + script.start); why != "" {
			return []string{"start: " + why}, 0
		}
		if p, err = r.next(seen); err != nil {
			return []string{err.Error()}, 0
		}
	}
	for i, v := range script.visits {
		if len(p.Loads) <= seen {
			what := "nothing"
			if p.Done != "" {
				what = "the page says " + strconv.Quote(p.Done)
			}
			return append(problems, fmt.Sprintf("%s: %s instead of activity %s", v.key, what, v.act)), delivered
		}
		l := p.Loads[len(p.Loads)-1]
		seen = len(p.Loads)
		if l.File == "SequencingTestFail.htm" {
			return append(problems, fmt.Sprintf("%s: the LMS launched SequencingTestFail.htm (act=%s), a resource no item may deliver", v.key, l.Act)), delivered
		}
		if l.Act != v.act {
			return append(problems, fmt.Sprintf("%s: activity %s delivered, want activity %s", v.key, l.Act, v.act)), delivered
		}
		if !l.API {
			return append(problems, v.key+": the SCO found no API_1484_11"), delivered
		}
		delivered++
		problems = append(problems, r.questions(v)...)
		calls := r.words.calls(v.commands)
		learner.identify(calls)
		js, _ := json.Marshal(calls)
		var out struct {
			Error   string      `json:"error"`
			Results []lmsResult `json:"results"`
		}
		_ = r.clearMessage()
		if err := r.eval(`JSON.stringify(document.getElementById("frame").contentWindow.__adlRun(`+string(js)+`))`, &out); err != nil {
			return append(problems, fmt.Sprintf("%s: running the SCO: %v", v.key, err)), delivered
		}
		if out.Error != "" {
			return append(problems, v.key+": "+out.Error), delivered
		}
		for k, c := range calls {
			if k < len(out.Results) {
				if bad := c.check(out.Results[k]); bad != "" {
					problems = append(problems, v.key+": "+bad)
				}
			}
		}
		if i == len(script.visits)-1 {
			return problems, delivered
		}
		// What comes next: the request the SCO left (its terminating commit's answer), else
		// the tester's button; a session that ended is launched again (resumed when
		// suspended), as the script's relaunch instructions say.
		requested := false
		for _, c := range calls {
			if c.Op == "SET" && c.El == "adl.nav.request" && c.Val != "_none_" {
				requested = true
			}
		}
		if next := packageOf(script.visits[i+1]); next != cur {
			// The script goes on in another package: the session ends (by the SCO's request,
			// else the tester exits the course: "exit the package/course and launch …") and
			// the tester launches the other course, resumed when it was suspended.
			if !requested {
				if why := r.press("Exit"); why != "" {
					return append(problems, v.key+": the tester cannot press "+why), delivered
				}
			}
			if p, err = r.next(seen); err != nil || len(p.Loads) > seen || p.Done == "" {
				return append(problems, fmt.Sprintf("%s: the session of %s does not end before %s is launched (%v)", v.key, cur, next, err)), delivered
			}
			cur, reg = next, regOf[next]
			if err := r.launch(regs, reg); err != nil {
				return append(problems, "launch of "+next+": "+err.Error()), delivered
			}
			seen = 0
			if p, err = r.next(0); err != nil {
				return append(problems, err.Error()), delivered
			}
			continue
		}
		if lmsStays[l.File] || !requested {
			switch {
			case v.cui == "Continue" || v.cui == "Previous" || strings.HasPrefix(v.cui, "Choice~"):
				if why := r.press(v.cui); why != "" {
					return append(problems, v.key+": the tester cannot press "+why), delivered
				}
			case lmsLaunchTitle.MatchString(r.instructions[v.cui]):
				if why := r.press("Choice~" + lmsLaunchTitle.FindStringSubmatch(r.instructions[v.cui])[1]); why != "" {
					return append(problems, v.key+": the tester cannot press "+why), delivered
				}
			case strings.Contains(r.instructions[v.cui], "<b>Suspend All</b>"):
				// "trigger a Suspend All Navigation Event": the player's Suspend.
				if why := r.press("Suspend"); why != "" {
					return append(problems, v.key+": the tester cannot press "+why), delivered
				}
			case lmsStays[l.File]:
				// The tester leaves the course; the SCO's unload says what follows.
				if why := r.press("Exit"); why != "" {
					return append(problems, v.key+": the tester cannot press "+why), delivered
				}
			}
		}
		if p, err = r.next(seen); err != nil {
			return append(problems, err.Error()), delivered
		}
		if press := r.afterRequest(v); requested && len(p.Loads) == seen && p.Done != "" && !strings.HasPrefix(p.Done, "You have finished") && press != "" {
			// The SCO's request took it away and delivered nothing (exit, abandon): the tester
			// goes on as the instruction says.
			_ = r.clearMessage()
			if why := r.press(press); why != "" {
				return append(problems, v.key+": after the SCO's request, the tester cannot press "+why), delivered
			}
			if p, err = r.next(seen); err != nil {
				return append(problems, err.Error()), delivered
			}
		}
		if len(p.Loads) == seen && (p.Done == "" || strings.HasPrefix(p.Done, "You have finished")) {
			// Nothing delivered: the tester ends this session (if the LMS has not) and
			// launches the course again.
			if p.Done == "" {
				_ = r.press("Exit")
				if p, err = r.next(seen); err != nil || p.Done == "" {
					return append(problems, fmt.Sprintf("%s: nothing delivered after it, and Exit does not end the session (%v)", v.key, err)), delivered
				}
			}
			if err := r.launch(regs, reg); err != nil {
				return append(problems, "relaunch: "+err.Error()), delivered
			}
			seen = 0
			if p, err = r.next(0); err != nil {
				return append(problems, err.Error()), delivered
			}
			if title := r.afterRelaunch(v); title != "" {
				// The tester chooses an activity once the course is back (whatever the LMS
				// delivered first on its own).
				seen = len(p.Loads)
				_ = r.clearMessage()
				if why := r.press("Choice~" + title); why != "" {
					return append(problems, v.key+": after relaunching, the tester cannot press "+why), delivered
				}
				if p, err = r.next(seen); err != nil {
					return append(problems, err.Error()), delivered
				}
			}
		}
	}
	return problems, delivered
}

// TestADLLMSInBrowser runs every ADL LMS run-time test case in Chromium against the player,
// on both modes, one browser and one learner for all cases (ADL's organizations leave
// objectivesGlobalToSystem at true, and some cases read what the case before them wrote, so
// they run in the suite's order). A case passes when every delivery is the script's, each
// call returns what the script expects and the controls answer the script's questions. The
// outcome must match lmsPassing: a case that passes and is not listed fails the test as much
// as a listed case that fails, so the list is always the product's.
func TestADLLMSInBrowser(t *testing.T) {
	sco, err := os.ReadFile(filepath.Join("testdata", "adl-sco", "sco.html"))
	if err != nil {
		t.Fatal(err)
	}
	words := lmsWords{}
	for _, kv := range testenv.ADLProperties(t, testenv.ADLResource(t, "Commands.properties")) {
		words[kv[0]] = kv[1]
	}
	instructions := map[string]string{}
	for _, kv := range testenv.ADLProperties(t, testenv.ADLResource(t, "Instructions.properties")) {
		instructions[kv[0]] = kv[1]
	}
	cases := lmsCases(t)
	if only := os.Getenv("LECTERN_ADL_CASES"); only != "" {
		// A comma-separated subset, for working on a few cases; the pinned list is not
		// checked then.
		cases = slices.DeleteFunc(cases, func(c string) bool { return !slices.Contains(strings.Split(only, ","), c) })
	}
	forEachMode(t, func(t *testing.T, e *env) {
		e.createTenant("adl", true)
		r := &lmsRunner{t: t, e: e, ctx: adlBrowser(t, 20*time.Minute), words: words, instructions: instructions, sco: sco,
			rc: servertest.NewPostReceiver(t)}
		start := time.Now()
		var passing []string
		var failing strings.Builder
		var counts lmsReportCounts
		for _, name := range cases {
			began := time.Now()
			problems, delivered := r.run(name, "adl", adlLearner)
			if len(problems) == 0 {
				// The learner's path did what the script asks: the reports must show it.
				problems = r.reportsAgree(name, "adl", &counts)
			}
			if len(problems) == 0 {
				passing = append(passing, name)
				t.Logf("%s: ok (%d deliveries, %s)", name, delivered, time.Since(began).Round(time.Millisecond))
			} else {
				t.Logf("%s: FAIL after %d deliveries: %s", name, delivered, strings.Join(problems, "; "))
				fmt.Fprintf(&failing, "\t%q: %q,\n", name, lmsReason(problems[0]))
			}
			if os.Getenv("LECTERN_ADL_CASES") != "" {
				continue
			}
			_, pinnedFailing := lmsFailing[name]
			if only := lmsFailsOnlyIn[name]; only != "" && !strings.HasSuffix(t.Name(), "/"+only) {
				pinnedFailing = false
			}
			switch {
			case len(problems) > 0 && !pinnedFailing:
				t.Errorf("%s is pinned as passing and fails: %s", name, strings.Join(problems, "; "))
			case len(problems) == 0 && pinnedFailing:
				t.Errorf("%s passes and is pinned in lmsFailing: take it out", name)
			}
		}
		t.Logf("ADL LMS cases passing in Chromium: %d of %d in %s; passing: %q", len(passing), len(cases), time.Since(start).Round(time.Second), passing)
		t.Logf("reports held against the sequencer: %d registrations, %d activities, %d objectives, %d global objectives in progress/detail; %d FULL post-backs agreeing",
			counts.registrations, counts.activities, counts.objectives, counts.globals, counts.postBacks)
		t.Logf("failing, as lmsFailing:\n%s", failing.String())
	})
}

// lmsReason is a problem as lmsFailing records it: its first line, 140 characters at most.
func lmsReason(p string) string {
	p, _, _ = strings.Cut(p, "\n")
	if r := []rune(p); len(r) > 140 {
		return string(r[:140]) + "…"
	}
	return p
}

// lmsFailing are the ADL LMS cases that fail in Chromium (on both modes unless lmsFailsOnlyIn
// says otherwise), each with the first problem the run found; every other case passes. TestADLLMSInBrowser keeps the list true
// (a listed case that passes fails it as much as an unlisted one that fails), and
// TestADLLMSConformanceDoc keeps docs/conformance.md's table generated from it.
var lmsFailing = map[string]string{}

// lmsFailsOnlyIn names the mode (embedded, distributed) in which a case of lmsFailing fails;
// it passes in the other. A case not named here fails in both.
var lmsFailsOnlyIn = map[string]string{}

const (
	lmsDocBegin = "<!-- BEGIN adl-lms: generated from lmsFailing (server/adl_lmsrte_browser_test.go); LECTERN_UPDATE_DOCS=1 go test -run TestADLLMSConformanceDoc ./server/ -->"
	lmsDocEnd   = "<!-- END adl-lms -->"
)

// lmsDocTable is docs/conformance.md's table of the ADL LMS cases.
func lmsDocTable(cases []string) string {
	var b strings.Builder
	result := func(c, mode string) string {
		if _, ok := lmsFailing[c]; ok && (lmsFailsOnlyIn[c] == "" || lmsFailsOnlyIn[c] == mode) {
			return "fail"
		}
		return "pass"
	}
	count := func(mode string) int {
		n := 0
		for _, c := range cases {
			if result(c, mode) == "pass" {
				n++
			}
		}
		return n
	}
	fmt.Fprintf(&b, "%s\n\nCases passing in Chromium: %d of %d embedded (SQLite), %d of %d distributed (PostgreSQL, Redis, MinIO, Elasticsearch).\n\n",
		lmsDocBegin, count("embedded"), len(cases), count("distributed"), len(cases))
	b.WriteString("| Case | Embedded | Distributed | First problem |\n|---|---|---|---|\n")
	for _, c := range cases {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c, result(c, "embedded"), result(c, "distributed"), strings.ReplaceAll(lmsFailing[c], "|", "\\|"))
	}
	b.WriteString("\n" + lmsDocEnd)
	return b.String()
}

// TestADLLMSConformanceDoc checks that docs/conformance.md's table of the ADL LMS cases is
// the one lmsFailing gives (LECTERN_UPDATE_DOCS=1 rewrites it), so the document cannot say
// other than what TestADLLMSInBrowser holds the product to.
func TestADLLMSConformanceDoc(t *testing.T) {
	const doc = "../docs/conformance.md"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i, j := strings.Index(text, lmsDocBegin), strings.Index(text, lmsDocEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated ADL LMS table (%s … %s)", doc, lmsDocBegin, lmsDocEnd)
	}
	want := lmsDocTable(lmsCases(t))
	if got := text[i : j+len(lmsDocEnd)]; got != want {
		if os.Getenv("LECTERN_UPDATE_DOCS") == "" {
			t.Fatalf("%s's ADL LMS table is not lmsFailing's: run LECTERN_UPDATE_DOCS=1 go test -run TestADLLMSConformanceDoc ./server/", doc)
		}
		if err := os.WriteFile(doc, []byte(text[:i]+want+text[j+len(lmsDocEnd):]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
