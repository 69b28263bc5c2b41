package settings

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
)

// servedIDs lists every setting the catalogue serves: the ones whose effect Lectern
// implements (server/engineapi/settings_test.go shows each through HTTP). Adding a setting means
// implementing it and testing its effect first.
var servedIDs = []string{
	"ApiResultLimit", "ApiResultLimitSinceNotSpecified", // reference §2.2: course list page sizes
	"xAPIEnabled",                                                   // spec 000: xapiActivityId 404 "when xAPI is not enabled"
	"TinCanRootAccount", "TinCanBasicAccounts", "xAPIBasicAccounts", // spec 002 Authentication, reference §2.10
	"EnableExistingActivityIdParserWarnings", "ValidateManifestsUsingXsd", // reference §2.3: import warnings
	// reference §2.9, course/rollup's tests:
	"PlayerStatusRollupModeValue", "PlayerStatusRollupModeThresholdScore", "PlayerScoreRollupModeValue",
	"PlayerScoreRollupModeNumberOfScoringObjects", "PlayerScaleRawScore", "PlayerCompletionStatOfFailedSuccessStat",
	"ApiRollupRegistrationPostBackUrl", "ApiRollupRegistrationAuthType", "ApiRollupRegistrationAuthUser",
	"ApiRollupRegistrationAuthPassword", "ApiRollupRegistrationFormat", "WhenToRestartRegistration", "RedirectOnExitUrl", "PlayerCommCommitFrequency",
	"ApiRollupRegistrationDuringSession", "ApiRollupRegistrationSynchronous", "ApiPostbackTimeoutSeconds",
	"ApiPostbackDataModelVersion", "SimpleQueueMaxTries",
	// run-time and rollup tweaks (seed_runtime.go):
	"PlayerSuspendDataMaxLength", "PlayerResetRunTimeData", "PlayerLaunchCompletedRegsAsNoCredit", "PlayerCommMaxFailedSubmissions",
	"PlayerFinishCausesImmediateCommit", "PlayerApplyRollupStatusToSuccess", "PlayerScoreOverridesStatus",
	"PlayerSatisfiedCausesCompletion", "PlayerRollupEmptySetToUnknown",
	// player sessions (seed_sessions.go):
	"ApiTokenPostbackValidHours", "ConcurrentLaunchDetectionEnabled", "ForceExitConcurrentLaunches",
	// The player's chrome and launch settings (seed_chrome.go).
	"PlayerShowFinishButton", "PlayerShowCloseItem", "PlayerShowNavBar", "PlayerShowProgressBar",
	"PlayerShowHelp", "PlayerShowTitleBar", "PlayerShowCourseStructure", "PlayerLaunchType", "PlayerScoLaunchType",
	"PromptOnPlayerClose", "RedirectOnRefreshUrl", "RedirectLaunchPageOnExit", "SupplementalQueryStringParametersForAllActivities",
	// reference §2.10, server/engineapi/settings_xapireg_test.go:
	"TinCanInteractionsEnabled", "GenerateTinCanLaunchStatements", "xAPILaunchActorFormat", "xAPILaunchTokenLifeInSeconds",
	"UseStatementTimestampInRegistrationUpdates", "Cmi5EnforceStatementRules",
	// SCORM to xAPI conversion (seed_convert.go).
	"SystemHomepageUrl", "ConvertTinCanFromScormRealtime", "ConvertTinCanFromScormHistorical",
	// statement forwarding (seed_forward.go):
	"TinCanStatementForwardSleepTime", "TinCanStatementForwardMaxBackoffHours",
	"TinCanStatementForwardStmtBatchSize", "TinCanStatementForwardWebTimeout",
}

// removedIDs are the settings taken out of the catalogue because nothing in Lectern acts on
// them yet (player, registrations, launch, postbacks, forwarding, skills, tenant
// auto-creation); docs/decisions.md lists them with their semantics for the issue that
// restores each. Serving any of them again without implementing it is the defect this test
// guards against.
var removedIDs = []string{
	"ApiUseSignedLaunchLinks", "PlayerCaptureHistoryDetailed",
	"DefaultCommCommitFrequency", "PlayerLookaheadSequencerMode",
	"xAPIUrlPrefix", "xAPIValidations",
	"ExpireLaunchHistoryAfterDays", "ShouldExpireLaunchHistory",
	"AllowedTenantNames", "AllowedTenantNameRegex",
	"GENERATION__SKILL_TAXONOMY",
}

// secretIDs are the write-only settings: passwords and account lists.
var secretIDs = []string{"ApiRollupRegistrationAuthPassword", "TinCanBasicAccounts", "TinCanRootAccount", "xAPIBasicAccounts"}

// fixture is the served catalogue plus definitions of the kinds the registrations issue will
// bring back (cascading, enums, URL keywords, system level, secrets at registration level),
// so the cascade, validation and redaction rules are tested on every type and level even
// while the served catalogue holds none of them.
func fixture(t *testing.T) *Catalogue {
	t.Helper()
	defs := append(builtin(),
		integer("DefaultCommCommitFrequency", "10000", 100, 3_600_000, LevelSystem, "d"),
		Setting{ID: "AllowedTenantNameRegex", Type: TypeRegex, Levels: LevelSystem, Description: "d"},
	)
	c, err := New(defs...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCatalogueServesOnlyImplementedSettings(t *testing.T) {
	c := Default()
	for _, id := range servedIDs {
		if _, ok := c.Lookup(id); !ok {
			t.Errorf("implemented setting %s missing from catalogue", id)
		}
	}
	for _, s := range c.All() {
		if !slices.Contains(servedIDs, s.ID) {
			t.Errorf("catalogue serves %s, which is not in servedIDs (implement and test it first)", s.ID)
		}
	}
	for _, id := range removedIDs {
		if _, ok := c.Lookup(id); ok {
			t.Errorf("catalogue serves %s, which nothing implements yet", id)
		}
	}
	if c.Len() != len(servedIDs) {
		t.Errorf("Len() = %d, want %d", c.Len(), len(servedIDs))
	}
}

func TestSecretsAreExactlyCredentials(t *testing.T) {
	var got []string
	for _, s := range Default().All() {
		if s.Secret {
			got = append(got, s.ID)
		}
	}
	want := slices.Clone(secretIDs)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("secret ids = %v, want %v", got, want)
	}
}

func TestSeedDefinitionsAreWellFormed(t *testing.T) {
	for _, s := range Default().All() {
		if s.Description == "" {
			t.Errorf("%s has no description", s.ID)
		}
		if s.Levels&LevelSystem != 0 && s.Levels != LevelSystem {
			t.Errorf("%s mixes system and API levels: %s", s.ID, s.Levels)
		}
	}
}

func TestLookup(t *testing.T) {
	c := Default()
	tests := []struct {
		id     string
		ok     bool
		typ    Type
		def    string
		levels Level
	}{
		{"ApiResultLimit", true, TypeInt, "100", LevelTenant},
		{"ApiResultLimitSinceNotSpecified", true, TypeInt, "10", LevelTenant},
		{"xAPIEnabled", true, TypeBool, "true", cascading},
		{"EnableExistingActivityIdParserWarnings", true, TypeBool, "true", LevelTenant},
		{"TinCanRootAccount", true, TypeCredentials, "", LevelTenant},
		{"PlayerShowFinishButton", true, TypeBool, "", cascading}, // empty: the package's value
		{"PlayerCaptureHistoryDetailed", false, 0, "", 0},         // not served: no launch history
		{"apiresultlimit", false, 0, "", 0},                       // ids are case-sensitive
		{"NoSuchSetting", false, 0, "", 0},
		{"", false, 0, "", 0},
	}
	for _, tt := range tests {
		s, ok := c.Lookup(tt.id)
		if ok != tt.ok {
			t.Errorf("Lookup(%q) ok = %v, want %v", tt.id, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if s.ID != tt.id || s.Type != tt.typ || s.Default != tt.def || s.Levels != tt.levels {
			t.Errorf("Lookup(%q) = {%s %s %q %s}, want {%s %s %q %s}",
				tt.id, s.ID, s.Type, s.Default, s.Levels, tt.id, tt.typ, tt.def, tt.levels)
		}
	}
}

func TestLookupReturnsCopies(t *testing.T) {
	c := fixture(t)
	s, _ := c.Lookup("ApiRollupRegistrationFormat")
	s.Allowed[0] = "mutated"
	all := c.All()
	for i := range all {
		if all[i].Allowed != nil {
			all[i].Allowed[0] = "mutated"
		}
	}
	again, _ := c.Lookup("ApiRollupRegistrationFormat")
	if again.Allowed[0] != "course" {
		t.Fatalf("catalogue mutated through a returned copy: %v", again.Allowed)
	}
	if got, _ := fixture(t).Lookup("ApiRollupRegistrationFormat"); got.Allowed[0] != "course" {
		t.Fatalf("New shares state between calls: %v", got.Allowed)
	}
}

func TestAllSortedByID(t *testing.T) {
	all := Default().All()
	if !slices.IsSortedFunc(all, func(a, b Setting) int { return strings.Compare(a.ID, b.ID) }) {
		t.Fatal("All() is not sorted by id")
	}
}

func TestNormalize(t *testing.T) {
	str := Setting{ID: "S", Type: TypeString, Levels: LevelTenant}
	boolReq := Setting{ID: "B", Type: TypeBool, Default: "true", Levels: LevelTenant}
	boolPkg := Setting{ID: "BP", Type: TypeBool, Levels: LevelTenant}
	intFree := Setting{ID: "I", Type: TypeInt, Default: "0", Levels: LevelTenant}
	intMin := Setting{ID: "IM", Type: TypeInt, Default: "1", Bounded: true, Min: 1, Max: math.MaxInt64, Levels: LevelTenant}
	intRange := Setting{ID: "IR", Type: TypeInt, Default: "5", Bounded: true, Min: 0, Max: 10, Levels: LevelTenant}
	enumS := Setting{ID: "E", Type: TypeEnum, Default: "course", Allowed: []string{"course", "activity", "FULL"}, Levels: LevelTenant}
	urlS := Setting{ID: "U", Type: TypeURL, Levels: LevelTenant}
	urlKW := Setting{ID: "UK", Type: TypeURL, Allowed: []string{"closer", "blank", "message"}, Levels: LevelTenant}
	jsonS := Setting{ID: "J", Type: TypeJSON, Levels: LevelTenant}
	reS := Setting{ID: "R", Type: TypeRegex, Levels: LevelTenant}
	credS := Setting{ID: "C", Type: TypeCredentials, Levels: LevelTenant, Secret: true}

	tests := []struct {
		name    string
		s       Setting
		in      string
		want    string
		wantErr bool
	}{
		{"string verbatim", str, "  a b ", "  a b ", false},
		{"string empty", str, "", "", false},
		{"string invalid utf8", str, "\xff", "", true},

		{"bool true", boolReq, "true", "true", false},
		{"bool TRUE", boolReq, "TRUE", "true", false},
		{"bool YES", boolReq, "YES", "true", false},
		{"bool yes", boolReq, "yes", "true", false},
		{"bool Yes padded", boolReq, " Yes ", "true", false},
		{"bool false", boolReq, "false", "false", false},
		{"bool NO", boolReq, "NO", "false", false},
		{"bool no", boolReq, "no", "false", false},
		{"bool 1 rejected", boolReq, "1", "", true},
		{"bool y rejected", boolReq, "y", "", true},
		{"bool empty rejected", boolReq, "", "", true},
		{"bool pkg empty ok", boolPkg, "", "", false},
		{"bool pkg blank ok", boolPkg, "  ", "", false},

		{"int", intFree, "42", "42", false},
		{"int negative", intFree, "-3", "-3", false},
		{"int plus and zeros", intFree, "+007", "7", false},
		{"int abc", intFree, "abc", "", true},
		{"int float", intFree, "1.5", "", true},
		{"int overflow", intFree, "99999999999999999999", "", true},
		{"int empty", intFree, "", "", true},
		{"int min ok", intMin, "1", "1", false},
		{"int below min", intMin, "0", "", true},
		{"int range low", intRange, "0", "0", false},
		{"int range high", intRange, "10", "10", false},
		{"int above max", intRange, "11", "", true},

		{"enum exact", enumS, "course", "course", false},
		{"enum fold", enumS, "ACTIVITY", "activity", false},
		{"enum fold upper canonical", enumS, "full", "FULL", false},
		{"enum unknown", enumS, "summary", "", true},
		{"enum empty", enumS, "", "", true},

		{"url http", urlS, "http://lms.example/pb", "http://lms.example/pb", false},
		{"url https query", urlS, "https://lms.example/pb?a=1", "https://lms.example/pb?a=1", false},
		{"url upper scheme", urlS, "HTTPS://lms.example/", "HTTPS://lms.example/", false},
		{"url empty", urlS, "", "", false},
		{"url relative", urlS, "/pb", "", true},
		{"url ftp", urlS, "ftp://lms.example/", "", true},
		{"url no host", urlS, "http:///pb", "", true},
		{"url garbage", urlS, "::", "", true},
		{"url javascript", urlS, "javascript:alert(1)", "", true},
		{"url keyword not allowed", urlS, "closer", "", true},
		{"url keyword", urlKW, "CLOSER", "closer", false},
		{"url keyword url", urlKW, "https://x.example/done", "https://x.example/done", false},

		{"json object compacted", jsonS, `{ "a" : [1, 2] }`, `{"a":[1,2]}`, false},
		{"json bad", jsonS, `{a:1}`, "", true},
		{"json empty pkg", jsonS, "", "", false},

		{"regex ok", reS, `^[a-z0-9-]{1,64}$`, `^[a-z0-9-]{1,64}$`, false},
		{"regex bad", reS, `([a-z`, "", true},

		{"credentials ok", credS, "root:s3cret:with:colons", "root:s3cret:with:colons", false},
		{"credentials empty password", credS, "root:", "root:", false},
		{"credentials no colon", credS, "root", "", true},
		{"credentials no user", credS, ":pw", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Normalize(tt.s, tt.in)
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidValue) {
					t.Fatalf("Normalize(%q) error = %v, want ErrInvalidValue", tt.in, err)
				}
				if !strings.Contains(err.Error(), "'"+tt.s.ID+"'") {
					t.Errorf("error %q does not name setting %s", err, tt.s.ID)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize(%q) unexpected error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeMessages(t *testing.T) {
	c := fixture(t)
	tests := []struct {
		id, in, want string
	}{
		{"ApiResultLimit", "abc", `setting 'ApiResultLimit' expects an integer, got "abc"`},
		{"ApiResultLimit", "0", `setting 'ApiResultLimit' must be between 1 and 1000, got "0"`},
		{"PromptOnPlayerClose", "maybe", `setting 'PromptOnPlayerClose' expects a boolean (true, false, YES or NO), got "maybe"`},
		{"ApiRollupRegistrationFormat", "xml", `setting 'ApiRollupRegistrationFormat' expects one of course, activity, full, got "xml"`},
		{"ApiRollupRegistrationPostBackUrl", "lms/pb", `setting 'ApiRollupRegistrationPostBackUrl' expects an absolute http(s) URL, got "lms/pb"`},
		{"ApiResultLimit", "", `setting 'ApiResultLimit' requires a value (an integer between 1 and 1000)`},
		// Secrets are never echoed back.
		{"TinCanRootAccount", "hunter2", `setting 'TinCanRootAccount' expects <username>:<password>, got (redacted)`},
	}
	for _, tt := range tests {
		s, ok := c.Lookup(tt.id)
		if !ok {
			t.Fatalf("missing %s", tt.id)
		}
		_, err := Normalize(s, tt.in)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Normalize(%s, %q) error = %v, want %s", tt.id, tt.in, err, tt.want)
		}
	}
	s, _ := c.Lookup("SupplementalQueryStringParametersForAllActivities")
	s.Type = TypeInt // force an error on a long value
	_, err := Normalize(s, strings.Repeat("x", 500))
	if err == nil || len(err.Error()) > 200 {
		t.Errorf("long value not truncated in message: %v", err)
	}
}

func TestValidate(t *testing.T) {
	c := fixture(t)
	tests := []struct {
		name    string
		id      string
		level   Level
		in      string
		want    string
		wantErr error
	}{
		{"tenant ok", "ApiResultLimit", LevelTenant, "50", "50", nil},
		{"course not allowed", "ApiResultLimit", LevelCourse, "50", "", ErrWrongLevel},
		{"registration ok", "PlayerShowFinishButton", LevelRegistration, "YES", "true", nil},
		{"unknown", "NoSuchSetting", LevelTenant, "1", "", ErrUnknownSetting},
		{"unknown wins over level", "NoSuchSetting", LevelCourse | LevelTenant, "1", "", ErrUnknownSetting},
		{"level before value", "ApiResultLimit", LevelRegistration, "abc", "", ErrWrongLevel},
		{"invalid", "ApiResultLimit", LevelTenant, "abc", "", ErrInvalidValue},
		{"system not via API", "AllowedTenantNameRegex", LevelTenant, "^a$", "", ErrWrongLevel},
		{"system via deployment", "AllowedTenantNameRegex", LevelSystem, "^a$", "^a$", nil},
		{"multi level rejected", "PromptOnPlayerClose", LevelTenant | LevelCourse, "true", "", ErrBadLayer},
		{"secret write", "ApiRollupRegistrationAuthPassword", LevelRegistration, " p w ", " p w ", nil},
		{"enum canonical", "WhenToRestartRegistration", LevelCourse, "never", "NEVER", nil},
		{"redirect keyword", "RedirectOnExitUrl", LevelRegistration, "Message", "message", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Validate(tt.id, tt.level, tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("error = %v, want %v", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Validate = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
	_, err := c.Validate("ApiResultLimit", LevelCourse, "5")
	if want := "setting 'ApiResultLimit' cannot be set at course level (allowed: tenant)"; err == nil || err.Error() != want {
		t.Errorf("wrong-level message = %v, want %s", err, want)
	}
}

func TestResolveCascade(t *testing.T) {
	c := fixture(t)
	sys := Layer{Level: LevelSystem, Values: map[string]string{"DefaultCommCommitFrequency": "5000"}}
	tenant := Layer{Level: LevelTenant, Values: map[string]string{
		"PromptOnPlayerClose":              "true",
		"ApiRollupRegistrationPostBackUrl": "https://tenant.example/pb",
		"PlayerShowFinishButton":           "NO",
		"ApiResultLimit":                   "25",
	}}
	course := Layer{Level: LevelCourse, Values: map[string]string{
		"PromptOnPlayerClose":    "false",
		"PlayerShowFinishButton": "YES",
	}}
	reg := Layer{Level: LevelRegistration, Values: map[string]string{
		"ApiRollupRegistrationPostBackUrl": "https://reg.example/pb",
	}}
	tests := []struct {
		name   string
		id     string
		layers []Layer
		want   string
	}{
		{"default only", "ApiResultLimit", nil, "100"},
		{"tenant overrides default", "ApiResultLimit", []Layer{tenant, course, reg}, "25"},
		{"course overrides tenant", "PromptOnPlayerClose", []Layer{tenant, course, reg}, "false"},
		{"registration overrides all", "ApiRollupRegistrationPostBackUrl", []Layer{tenant, course, reg}, "https://reg.example/pb"},
		{"falls back past missing level", "ApiRollupRegistrationPostBackUrl", []Layer{tenant, course}, "https://tenant.example/pb"},
		{"course layer omitted", "PlayerShowFinishButton", []Layer{tenant, reg}, "false"},
		{"stored YES canonicalised", "PlayerShowFinishButton", []Layer{tenant, course}, "true"},
		{"pkg default empty", "PlayerShowNavBar", []Layer{tenant, course, reg}, ""},
		{"system layer", "DefaultCommCommitFrequency", []Layer{sys, tenant}, "5000"},
		{"empty maps", "ApiResultLimitSinceNotSpecified", []Layer{{Level: LevelTenant}, {Level: LevelCourse}}, "10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.Resolve(tt.id, tt.layers...)
			if err != nil || got != tt.want {
				t.Fatalf("Resolve(%s) = %q, %v; want %q", tt.id, got, err, tt.want)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	c := Default()
	tenant := Layer{Level: LevelTenant}
	course := Layer{Level: LevelCourse}
	tests := []struct {
		name    string
		id      string
		layers  []Layer
		wantErr error
	}{
		{"unknown id", "Nope", nil, ErrUnknownSetting},
		{"out of order", "ApiResultLimit", []Layer{course, tenant}, ErrBadLayer},
		{"duplicate level", "ApiResultLimit", []Layer{tenant, tenant}, ErrBadLayer},
		{"zero level", "ApiResultLimit", []Layer{{}}, ErrBadLayer},
		{"combined level", "ApiResultLimit", []Layer{{Level: LevelTenant | LevelCourse}}, ErrBadLayer},
		{"stored at wrong level", "ApiResultLimit", []Layer{{Level: LevelCourse, Values: map[string]string{"ApiResultLimit": "5"}}}, ErrWrongLevel},
		{"stored invalid", "ApiResultLimit", []Layer{{Level: LevelTenant, Values: map[string]string{"ApiResultLimit": "0"}}}, ErrInvalidValue},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := c.Resolve(tt.id, tt.layers...); !errors.Is(err, tt.wantErr) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestSecretsAreWriteOnly(t *testing.T) {
	c := fixture(t)
	tenant := Layer{Level: LevelTenant, Values: map[string]string{
		"TinCanRootAccount":                 "root:hunter2",
		"xAPIBasicAccounts":                 "reader:pw",
		"ApiRollupRegistrationAuthPassword": "tenant-pw",
		"ApiRollupRegistrationAuthUser":     "lms",
	}}
	reg := Layer{Level: LevelRegistration, Values: map[string]string{
		"ApiRollupRegistrationAuthPassword": "reg-pw",
	}}

	// The engine itself still sees the clear value.
	if v, err := c.Resolve("ApiRollupRegistrationAuthPassword", tenant, reg); err != nil || v != "reg-pw" {
		t.Fatalf("Resolve secret = %q, %v", v, err)
	}
	if it, err := c.Effective("ApiRollupRegistrationAuthPassword", tenant, reg); err != nil || it.Value != "" {
		t.Fatalf("Effective secret = %+v, %v; want empty value", it, err)
	}
	if it, err := c.Effective("ApiRollupRegistrationAuthUser", tenant, reg); err != nil || it.Value != "lms" {
		t.Fatalf("Effective user = %+v, %v", it, err)
	}

	items, err := c.EffectiveAll(tenant, reg)
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != c.Len() {
		t.Fatalf("EffectiveAll returned %d items, want %d", len(items), c.Len())
	}
	if !slices.IsSortedFunc(items, func(a, b Item) int { return strings.Compare(a.ID, b.ID) }) {
		t.Error("EffectiveAll not sorted by id")
	}
	seen := map[string]string{}
	for _, it := range items {
		seen[it.ID] = it.Value
		for _, leak := range []string{"hunter2", "reader:pw", "tenant-pw", "reg-pw"} {
			if strings.Contains(it.Value, leak) {
				t.Errorf("EffectiveAll leaks secret in %s", it.ID)
			}
		}
	}
	for _, id := range append(slices.Clone(secretIDs), "ApiRollupRegistrationAuthPassword") {
		if v, ok := seen[id]; !ok || v != "" {
			t.Errorf("secret %s: listed=%v value=%q; want listed with empty value", id, ok, v)
		}
	}
	if seen["ApiResultLimit"] != "100" || seen["ApiRollupRegistrationAuthUser"] != "lms" {
		t.Errorf("EffectiveAll values wrong: ApiResultLimit=%q AuthUser=%q", seen["ApiResultLimit"], seen["ApiRollupRegistrationAuthUser"])
	}
}

func TestEffectiveAllIgnoresRetiredIDsAndReportsBadValues(t *testing.T) {
	c := Default()
	if _, err := c.EffectiveAll(Layer{Level: LevelTenant, Values: map[string]string{"RetiredSetting": "x"}}); err != nil {
		t.Fatalf("unknown stored id should be ignored: %v", err)
	}
	_, err := c.EffectiveAll(Layer{Level: LevelTenant, Values: map[string]string{"ApiResultLimit": "abc"}})
	if !errors.Is(err, ErrInvalidValue) {
		t.Fatalf("error = %v, want ErrInvalidValue", err)
	}
	if _, err := c.EffectiveAll(Layer{Level: LevelCourse}, Layer{Level: LevelTenant}); !errors.Is(err, ErrBadLayer) {
		t.Fatalf("error = %v, want ErrBadLayer", err)
	}
}

func TestNewRejectsBadDefinitions(t *testing.T) {
	ok := Setting{ID: "X", Type: TypeBool, Default: "true", Levels: LevelTenant, Description: "d"}
	mod := func(f func(*Setting)) Setting { s := ok; f(&s); return s }
	tests := []struct {
		name string
		defs []Setting
	}{
		{"empty id", []Setting{mod(func(s *Setting) { s.ID = "" })}},
		{"padded id", []Setting{mod(func(s *Setting) { s.ID = " X" })}},
		{"zero type", []Setting{mod(func(s *Setting) { s.Type = 0 })}},
		{"no levels", []Setting{mod(func(s *Setting) { s.Levels = 0 })}},
		{"unknown level bit", []Setting{mod(func(s *Setting) { s.Levels = 1 << 7 })}},
		{"duplicate", []Setting{ok, ok}},
		{"non-canonical default", []Setting{mod(func(s *Setting) { s.Default = "YES" })}},
		{"invalid default", []Setting{mod(func(s *Setting) { s.Default = "maybe" })}},
		{"enum without values", []Setting{{ID: "E", Type: TypeEnum, Default: "", Levels: LevelTenant}}},
		{"allowed on int", []Setting{{ID: "I", Type: TypeInt, Default: "1", Allowed: []string{"1"}, Levels: LevelTenant}}},
		{"inverted bounds", []Setting{{ID: "I", Type: TypeInt, Default: "1", Bounded: true, Min: 5, Max: 1, Levels: LevelTenant}}},
		{"default out of bounds", []Setting{{ID: "I", Type: TypeInt, Default: "0", Bounded: true, Min: 1, Max: 5, Levels: LevelTenant}}},
	}
	for _, tt := range tests {
		if _, err := New(tt.defs...); err == nil {
			t.Errorf("%s: New accepted a bad definition", tt.name)
		}
	}
	if _, err := New(ok); err != nil {
		t.Errorf("New rejected a good definition: %v", err)
	}
}

func TestLevelString(t *testing.T) {
	tests := []struct {
		l    Level
		want string
	}{
		{0, "none"},
		{LevelTenant, "tenant"},
		{cascading, "tenant|course|registration"},
		{LevelSystem | 1<<6, "system|Level(0x40)"},
	}
	for _, tt := range tests {
		if got := tt.l.String(); got != tt.want {
			t.Errorf("Level(%d).String() = %q, want %q", tt.l, got, tt.want)
		}
	}
	if !cascading.Has(LevelCourse) || LevelTenant.Has(LevelCourse) || cascading.Has(0) {
		t.Error("Level.Has is wrong")
	}
}

func TestTypeString(t *testing.T) {
	want := map[Type]string{TypeString: "string", TypeBool: "bool", TypeInt: "int", TypeEnum: "enum",
		TypeURL: "url", TypeJSON: "json", TypeRegex: "regex", TypeCredentials: "credentials", 0: "Type(0)"}
	for typ, w := range want {
		if got := typ.String(); got != w {
			t.Errorf("Type(%d).String() = %q, want %q", int(typ), got, w)
		}
	}
}
