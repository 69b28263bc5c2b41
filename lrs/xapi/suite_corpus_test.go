package xapi

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestSuiteCorpus replays statement cases expanded from the ADL conformance suite's templated
// configs (JSON lines {"file","group","name","expect":[status],"data":statement}, one file
// per version: v103.jsonl, v200.jsonl) when LECTERN_XAPI_CORPUS names their directory. The
// corpus is generated locally from the installed suite and never committed:
//
//	cd <suite> && node <repo>/lrs/xapi/testdata/suite-corpus.js v1_0_3 > /tmp/c/v103.jsonl
//	cd <suite> && node <repo>/lrs/xapi/testdata/suite-corpus.js v2_0 > /tmp/c/v200.jsonl
//	LECTERN_XAPI_CORPUS=/tmp/c go test ./lrs/xapi -run SuiteCorpus -v
func TestSuiteCorpus(t *testing.T) {
	dir := os.Getenv("LECTERN_XAPI_CORPUS")
	if dir == "" {
		t.Skip("LECTERN_XAPI_CORPUS not set")
	}
	for _, c := range []struct {
		file string
		v    Version
	}{{"v103.jsonl", V103}, {"v200.jsonl", V200}} {
		f, err := os.Open(filepath.Join(dir, c.file))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<24)
		pass, fail := 0, 0
		for sc.Scan() {
			var tc struct {
				File, Group, Name string
				Expect            []int
				Data              json.RawMessage
			}
			if err := json.Unmarshal(sc.Bytes(), &tc); err != nil {
				t.Fatal(err)
			}
			_, _, err := ParseStatements(tc.Data, c.v)
			want := tc.Expect[0] < 300
			if (err == nil) == want {
				pass++
				continue
			}
			fail++
			t.Errorf("%s %s | %s | %s: want ok=%v, err=%v\n  %s", c.v, tc.File, tc.Group, tc.Name, want, err, tc.Data)
		}
		f.Close()
		t.Logf("%s: %d passed, %d failed", c.v, pass, fail)
	}
}
