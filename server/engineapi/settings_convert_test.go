package engineapi_test

import (
	"testing"
	"time"

	"github.com/lectern-lms/lectern/cmd/lectern/app/servertest"
)

// convertSettingEffects show the SCORM to xAPI conversion settings through HTTP: statements
// appear in the tenant's record store (or not) as a SCORM registration is taken.
var convertSettingEffects = []settingEffect{
	{"ConvertTinCanFromScormRealtime", func(t *testing.T, e *servertest.Env, tn string) {
		r := newRT(t, e, tn)
		r.course("c", "12")
		take := func(reg string) {
			r.register("c", reg)
			s, st := r.launch(reg, "sco1")
			r.commitEnd(s, "sco1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"completed"}`)
		}
		take("off")
		if n := len(r.statementsOf("off")); n != 0 {
			t.Fatalf("default: %d statements for a SCORM registration, want none", n)
		}
		r.set("ConvertTinCanFromScormRealtime", "true")
		take("on")
		if got := verbs(r.statementsOf("on")); got != "initialized,completed,terminated" {
			t.Fatalf("on: verbs %q", got)
		}
	}},
	{"ConvertTinCanFromScormHistorical", func(t *testing.T, e *servertest.Env, tn string) {
		r := newRT(t, e, tn)
		r.course("c", "12")
		r.register("c", "r")
		s, st := r.launch("r", "sco1")
		r.commitEnd(s, "sco1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"failed"}`)
		if n := len(r.statementsOf("r")); n != 0 {
			t.Fatalf("default: %d statements, want none", n)
		}
		r.set("ConvertTinCanFromScormHistorical", "true")
		servertest.Eventually(t, 20*time.Second, "the stored run-time data converted", func() bool {
			return verbs(r.statementsOf("r")) == "initialized,failed,terminated"
		})
	}},
	{"SystemHomepageUrl", func(t *testing.T, e *servertest.Env, tn string) {
		r := newRT(t, e, tn)
		r.course("c", "12")
		r.set("ConvertTinCanFromScormRealtime", "true")
		homePage := func(reg string) string {
			r.register("c", reg)
			s, st := r.launch(reg, "sco1")
			r.commitOK(s, "sco1", st.Attempt, `{"commitSequence":1,"cmi.core.lesson_status":"incomplete"}`)
			sts := r.statementsOf(reg)
			if len(sts) == 0 {
				t.Fatal("no converted statement")
			}
			return sts[0].Actor.Account.HomePage
		}
		if hp := homePage("before"); hp == "" || hp == "https://lms.example.com/" {
			t.Fatalf("default homePage %q, want the server's", hp)
		}
		r.set("SystemHomepageUrl", "https://lms.example.com/")
		if hp := homePage("after"); hp != "https://lms.example.com/" {
			t.Fatalf("homePage %q, want SystemHomepageUrl", hp)
		}
	}},
}
