package page

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/internal/testenv"
)

// node runs node on args in this directory and fails the test on a non-zero exit, with
// node's output.
func node(t *testing.T, args ...string) {
	t.Helper()
	out, err := exec.Command(testenv.Program(t, "node"), args...).CombinedOutput()
	t.Logf("node %s:\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatalf("node %s: %v", strings.Join(args, " "), err)
	}
}

// TestValues runs values_test.js, the tables of the RTE book's rules.
func TestValues(t *testing.T) {
	node(t, "values_test.js")
}

// TestSCORM2004API runs scorm2004_test.js: the page's SCORM 2004 API set-up over the
// scorm-again bundle it loads (built into ../assets by scripts/web-assets.sh).
func TestSCORM2004API(t *testing.T) {
	bundle, err := filepath.Abs(filepath.Join("..", "assets", "scorm-again.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bundle); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the scorm-again bundle is missing but CI is set: %v", err)
		}
		t.Skipf("the scorm-again bundle is missing (%v); run scripts/web-assets.sh", err)
	}
	node(t, "scorm2004_test.js", bundle)
}

// TestScriptInline: the page embeds the script in its HTML, where "</script" would end the
// element and "<!--" would change how the browser reads it (HTML's script data states); and
// the joined files must parse as one script.
func TestScriptInline(t *testing.T) {
	s := string(Script())
	for _, bad := range []string{"</script", "<script", "<!--"} {
		if strings.Contains(strings.ToLower(s), bad) {
			t.Errorf("the player's script holds %q", bad)
		}
	}
	f := filepath.Join(t.TempDir(), "script.js")
	if err := os.WriteFile(f, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	node(t, "--check", f)
}

// adlCase is a value the DMI script sets, with whether the RTE takes it (values_test.js).
type adlCase struct {
	El      string `json:"el"`
	Type    string `json:"type,omitempty"`
	Pattern bool   `json:"pattern"`
	Value   string `json:"value"`
	Want    bool   `json:"want"`
	Where   string `json:"where"`
}

var (
	// adlChecked are the elements values.js judges by data type (element()).
	adlChecked  = regexp.MustCompile(`^cmi\.(objectives\.\d+\.id|interactions\.\d+\.id|interactions\.\d+\.objectives\.\d+\.id|(comments_from_learner|interactions)\.\d+\.timestamp|session_time|interactions\.\d+\.latency|learner_preference\.language|(comments_from_learner\.\d+\.comment|objectives\.\d+\.description|interactions\.\d+\.description))$`)
	adlResponse = regexp.MustCompile(`^cmi\.interactions\.(\d+)\.(learner_response|correct_responses\.\d+\.pattern)$`)
	adlType     = regexp.MustCompile(`^cmi\.interactions\.(\d+)\.type$`)
	adlCommand  = regexp.MustCompile(`^(Act\d+)V\d+\.commands\.\d+$`)
)

// adlDMICases reads the SetValue calls of ADL's DMI script (its words in Commands.properties,
// as TestADLLMSInBrowser reads them) that set an element values.js judges, and that the
// script expects to succeed or to fail with 406 (wrong data type); an interaction's response
// is judged by the type the script gave the interaction before.
func adlDMICases(t *testing.T) []adlCase {
	words := map[string]string{}
	for _, kv := range testenv.ADLProperties(t, testenv.ADLResource(t, "Commands.properties")) {
		words[kv[0]] = kv[1]
	}
	word := func(k string) string {
		if v, ok := words[k]; ok {
			return v
		}
		return k
	}
	var cases []adlCase
	types := map[string]string{} // activity + interaction index → its type
	for _, kv := range testenv.ADLProperties(t, filepath.Join(testenv.ADLCourses(t), "TestCases", "DMI.properties")) {
		m := adlCommand.FindStringSubmatch(kv[0])
		f := strings.Split(kv[1], "->")
		if m == nil || len(f) < 4 || f[0] != "SET" {
			continue
		}
		code := f[len(f)-1]
		if code != "0" && code != "406" {
			continue
		}
		name, raw, _ := strings.Cut(f[1], "!")
		parts := strings.Split(name, "~")
		for i, p := range parts {
			parts[i] = word(p)
		}
		el := strings.Join(parts, ".")
		var value strings.Builder
		for _, p := range strings.Split(raw, "~") {
			value.WriteString(word(p))
		}
		c := adlCase{El: el, Value: value.String(), Want: code == "0", Where: "DMI " + kv[0]}
		if tm := adlType.FindStringSubmatch(el); tm != nil && c.Want {
			types[m[1]+"."+tm[1]] = c.Value
			continue
		}
		if rm := adlResponse.FindStringSubmatch(el); rm != nil {
			if c.Type = types[m[1]+"."+rm[1]]; c.Type == "" {
				continue
			}
			c.Pattern = rm[2] != "learner_response"
			cases = append(cases, c)
			continue
		}
		if adlChecked.MatchString(el) {
			cases = append(cases, c)
		}
	}
	return cases
}

// TestValuesADLDMI runs the values ADL's DMI script sets through values.js: what the script
// expects to be taken must pass, what it expects refused with 406 must not.
func TestValuesADLDMI(t *testing.T) {
	cases := adlDMICases(t)
	if len(cases) < 100 {
		t.Fatalf("only %d cases read from ADL's DMI script", len(cases))
	}
	b, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "dmi.json")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	node(t, "values_test.js", f)
}
