package xapi

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
)

// del marks a property to remove in a mod.
type delT struct{}

var del = delT{}

// mod sets (or with del removes) the property at a dotted path ("object.definition.type",
// "actor.member.0.mbox") of the base statement.
type mod struct {
	path string
	val  any
}

func baseStatement() map[string]any {
	return map[string]any{
		"actor":  map[string]any{"objectType": "Agent", "name": "Ann", "mbox": "mailto:ann@example.com"},
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/experienced", "display": map[string]any{"en-US": "experienced"}},
		"object": map[string]any{"objectType": "Activity", "id": "http://example.com/activities/a1"},
	}
}

func apply(m map[string]any, mods []mod) map[string]any {
	for _, md := range mods {
		keys := strings.Split(md.path, ".")
		var cur any = m
		for i, k := range keys {
			last := i == len(keys)-1
			switch c := cur.(type) {
			case map[string]any:
				if last {
					if _, isDel := md.val.(delT); isDel {
						delete(c, k)
					} else {
						c[k] = md.val
					}
					break
				}
				if _, ok := c[k]; !ok {
					c[k] = map[string]any{}
				}
				cur = c[k]
			case []any:
				n, _ := strconv.Atoi(k)
				if last {
					c[n] = md.val
					break
				}
				cur = c[n]
			}
		}
	}
	return m
}

func stmtJSON(mods ...mod) []byte {
	b, err := json.Marshal(apply(baseStatement(), mods))
	if err != nil {
		panic(err)
	}
	return b
}

// raw parses a JSON literal for use as a mod value.
func raw(s string) any {
	var x any
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		panic(s + ": " + err.Error())
	}
	return x
}

type vcase struct {
	name string
	mods []mod
	ok   bool
	// only restricts a case to one version ("" = both)
	only Version
}

func runCases(t *testing.T, cases []vcase) {
	t.Helper()
	for _, c := range cases {
		for _, v := range []Version{V103, V200} {
			if c.only != "" && c.only != v {
				continue
			}
			t.Run(string(v)+"/"+c.name, func(t *testing.T) {
				body := stmtJSON(c.mods...)
				_, _, err := ParseStatements(body, v)
				if (err == nil) != c.ok {
					t.Fatalf("ok=%v, err=%v\n%s", c.ok, err, body)
				}
				if err != nil {
					var xe *Error
					if !errors.As(err, &xe) {
						t.Fatalf("error is %T, want *Error", err)
					}
				}
			})
		}
	}
}

const sub = `{"objectType":"SubStatement","actor":{"mbox":"mailto:b@example.com"},"verb":{"id":"http://example.com/v"},"object":{"id":"http://example.com/a2"}}`

func TestFormatting(t *testing.T) {
	runCases(t, []vcase{
		{"base", nil, true, ""},
		{"missing actor", []mod{{"actor", del}}, false, ""},
		{"missing verb", []mod{{"verb", del}}, false, ""},
		{"missing object", []mod{{"object", del}}, false, ""},
		{"null actor", []mod{{"actor", nil}}, false, ""},
		{"null context", []mod{{"context", nil}}, false, ""},
		{"null nested", []mod{{"actor.name", nil}}, false, ""},
		{"unknown top property", []mod{{"foo", "bar"}}, false, ""},
		{"wrong case property", []mod{{"Actor", raw(`{"mbox":"mailto:a@b.c"}`)}}, false, ""},
		{"wrong case nested", []mod{{"verb.Display", raw(`{"en":"x"}`)}}, false, ""},
		{"id valid", []mod{{"id", "9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}}, true, ""},
		{"id uppercase", []mod{{"id", "9E13CEFD-53D3-4EAC-B5ED-2CF6693903BB"}}, true, ""},
		{"id numeric", []mod{{"id", 123}}, false, ""},
		{"id too long", []mod{{"id", "9e13cefd-53d3-4eac-b5ed-2cf6693903bbb"}}, false, ""},
		{"id non hex", []mod{{"id", "9e13cefd-53d3-4eac-b5ed-2cf6693903zz"}}, false, ""},
		{"stored accepted", []mod{{"stored", "2011-07-15T00:00:00.000Z"}}, true, ""},
		{"stored invalid", []mod{{"stored", "yesterday"}}, false, ""},
		{"empty extensions", []mod{{"object.definition", raw(`{"extensions":{}}`)}}, true, ""},
		{"extension null value", []mod{{"result", raw(`{"extensions":{"http://example.com/e":null}}`)}}, true, ""},
		{"extension empty string value", []mod{{"context", raw(`{"extensions":{"http://example.com/e":""}}`)}}, true, ""},
		{"extension key not IRI", []mod{{"context", raw(`{"extensions":{"e":1}}`)}}, false, ""},
		{"extensions not object", []mod{{"result", raw(`{"extensions":"x"}`)}}, false, ""},
	})
}

func TestActorRules(t *testing.T) {
	runCases(t, []vcase{
		{"agent without objectType", []mod{{"actor", raw(`{"mbox":"mailto:a@example.com"}`)}}, true, ""},
		{"agent mbox_sha1sum", []mod{{"actor", raw(`{"mbox_sha1sum":"cd9b00a5611f94eaa7b1661edab976068e364975"}`)}}, true, ""},
		{"agent openid", []mod{{"actor", raw(`{"openid":"http://openid.example.org/1"}`)}}, true, ""},
		{"agent account", []mod{{"actor", raw(`{"account":{"homePage":"http://example.com","name":"x1"}}`)}}, true, ""},
		{"agent no IFI", []mod{{"actor", raw(`{"name":"x"}`)}}, false, ""},
		{"agent two IFIs", []mod{{"actor", raw(`{"mbox":"mailto:a@example.com","openid":"http://o.example/1"}`)}}, false, ""},
		{"objectType lowercase", []mod{{"actor.objectType", "agent"}}, false, ""},
		{"objectType numeric", []mod{{"actor.objectType", 1}}, false, ""},
		{"objectType other", []mod{{"actor.objectType", "Activity"}}, false, ""},
		{"name numeric", []mod{{"actor.name", 1}}, false, ""},
		{"mbox without mailto", []mod{{"actor.mbox", "a@example.com"}}, false, ""},
		{"mbox not email", []mod{{"actor.mbox", "mailto:nobody"}}, false, ""},
		{"mbox_sha1sum short", []mod{{"actor", raw(`{"mbox_sha1sum":"cd9b00a5"}`)}}, false, ""},
		{"mbox_sha1sum not hex", []mod{{"actor", raw(`{"mbox_sha1sum":"zz9b00a5611f94eaa7b1661edab976068e364975"}`)}}, false, ""},
		{"openid not URI", []mod{{"actor", raw(`{"openid":"not a uri"}`)}}, false, ""},
		{"account without homePage", []mod{{"actor", raw(`{"account":{"name":"x"}}`)}}, false, ""},
		{"account without name", []mod{{"actor", raw(`{"account":{"homePage":"http://example.com"}}`)}}, false, ""},
		{"account homePage not IRL", []mod{{"actor", raw(`{"account":{"homePage":"example.com","name":"x"}}`)}}, false, ""},
		{"account name numeric", []mod{{"actor", raw(`{"account":{"homePage":"http://example.com","name":1}}`)}}, false, ""},
		{"account extra property", []mod{{"actor", raw(`{"account":{"homePage":"http://example.com","name":"x","id":1}}`)}}, false, ""},
		{"identified group", []mod{{"actor", raw(`{"objectType":"Group","mbox":"mailto:g@example.com"}`)}}, true, ""},
		{"identified group with members", []mod{{"actor", raw(`{"objectType":"Group","openid":"http://o.example/g","member":[{"mbox":"mailto:a@example.com"}]}`)}}, true, ""},
		{"anonymous group", []mod{{"actor", raw(`{"objectType":"Group","member":[{"mbox":"mailto:a@example.com"},{"objectType":"Agent","openid":"http://o.example/b"}]}`)}}, true, ""},
		{"anonymous group no members", []mod{{"actor", raw(`{"objectType":"Group","name":"g"}`)}}, false, ""},
		{"anonymous group empty members", []mod{{"actor", raw(`{"objectType":"Group","member":[]}`)}}, false, ""},
		{"group members not array", []mod{{"actor", raw(`{"objectType":"Group","member":{"mbox":"mailto:a@example.com"}}`)}}, false, ""},
		{"group member is group", []mod{{"actor", raw(`{"objectType":"Group","member":[{"objectType":"Group","mbox":"mailto:g@example.com"}]}`)}}, false, ""},
		{"group member invalid", []mod{{"actor", raw(`{"objectType":"Group","member":[{"name":"x"}]}`)}}, false, ""},
		{"group two IFIs", []mod{{"actor", raw(`{"objectType":"Group","mbox":"mailto:g@example.com","openid":"http://o.example/g"}`)}}, false, ""},
		{"group without objectType is agent", []mod{{"actor", raw(`{"member":[{"mbox":"mailto:a@example.com"}]}`)}}, false, ""},
	})
}

func TestVerbRules(t *testing.T) {
	runCases(t, []vcase{
		{"no display", []mod{{"verb.display", del}}, true, ""},
		{"missing id", []mod{{"verb.id", del}}, false, ""},
		{"id not IRI", []mod{{"verb.id", "experienced"}}, false, ""},
		{"display string", []mod{{"verb.display", "experienced"}}, false, ""},
		{"display bad tag", []mod{{"verb.display", raw(`{"something":"x"}`)}}, false, ""},
		{"display value numeric", []mod{{"verb.display", raw(`{"en":1}`)}}, false, ""},
		{"extra property", []mod{{"verb.foo", "x"}}, false, ""},
		{"voiding with StatementRef", []mod{{"verb.id", VoidVerb}, {"object", raw(`{"objectType":"StatementRef","id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}`)}}, true, ""},
		{"voiding an activity", []mod{{"verb.id", VoidVerb}}, false, ""},
	})
}

func TestObjectRules(t *testing.T) {
	runCases(t, []vcase{
		{"activity without objectType", []mod{{"object.objectType", del}}, true, ""},
		{"activity without id", []mod{{"object.id", del}}, false, ""},
		{"activity id not IRI", []mod{{"object.id", "a1"}}, false, ""},
		{"objectType lowercase", []mod{{"object.objectType", "activity"}}, false, ""},
		{"agent object", []mod{{"object", raw(`{"objectType":"Agent","mbox":"mailto:a@example.com"}`)}}, true, ""},
		{"agent object without objectType", []mod{{"object", raw(`{"mbox":"mailto:a@example.com"}`)}}, false, ""},
		{"group object without objectType", []mod{{"object", raw(`{"member":[{"mbox":"mailto:a@example.com"}]}`)}}, false, ""},
		{"statementref", []mod{{"object", raw(`{"objectType":"StatementRef","id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}`)}}, true, ""},
		{"statementref no id", []mod{{"object", raw(`{"objectType":"StatementRef"}`)}}, false, ""},
		{"statementref bad id", []mod{{"object", raw(`{"objectType":"StatementRef","id":"x"}`)}}, false, ""},
		{"statementref extra", []mod{{"object", raw(`{"objectType":"StatementRef","id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb","definition":{}}`)}}, false, ""},
		{"substatement", []mod{{"object", raw(sub)}}, true, ""},
		{"substatement without verb", []mod{{"object", raw(sub)}, {"object.verb", del}}, false, ""},
		{"substatement with id", []mod{{"object", raw(sub)}, {"object.id", "9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}}, false, ""},
		{"substatement with stored", []mod{{"object", raw(sub)}, {"object.stored", "2020-01-01T00:00:00Z"}}, false, ""},
		{"substatement with version", []mod{{"object", raw(sub)}, {"object.version", "1.0.0"}}, false, ""},
		{"substatement with authority", []mod{{"object", raw(sub)}, {"object.authority", raw(`{"mbox":"mailto:a@example.com"}`)}}, false, ""},
		{"nested substatement", []mod{{"object", raw(sub)}, {"object.object", raw(sub)}}, false, ""},
		{"substatement lowercase", []mod{{"object", raw(sub)}, {"object.objectType", "substatement"}}, false, ""},
		{"substatement bad timestamp", []mod{{"object", raw(sub)}, {"object.timestamp", "01/01/2015"}}, false, ""},
		{"substatement with statementref", []mod{{"object", raw(sub)}, {"object.object", raw(`{"objectType":"StatementRef","id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}`)}}, true, ""},
	})
}

func TestActivityDefinitionRules(t *testing.T) {
	def := func(s string) mod { return mod{"object.definition", raw(s)} }
	runCases(t, []vcase{
		{"empty definition", []mod{def(`{}`)}, true, ""},
		{"full", []mod{def(`{"name":{"en-US":"n"},"description":{"de-DE":"d"},"type":"http://example.com/t","moreInfo":"http://example.com/m","extensions":{"http://example.com/e":1}}`)}, true, ""},
		{"definition not object", []mod{def(`"x"`)}, false, ""},
		{"name string", []mod{def(`{"name":"n"}`)}, false, ""},
		{"name bad tag", []mod{def(`{"name":{"a12345678":"n"}}`)}, false, ""},
		{"type not IRI", []mod{def(`{"type":"t"}`)}, false, ""},
		{"moreInfo not IRL", []mod{def(`{"moreInfo":"m"}`)}, false, ""},
		{"unknown property", []mod{def(`{"foo":1}`)}, false, ""},
		{"choice", []mod{def(`{"interactionType":"choice","correctResponsesPattern":["a[,]b"],"choices":[{"id":"a","description":{"en-US":"A"}},{"id":"b"}]}`)}, true, ""},
		{"sequencing", []mod{def(`{"interactionType":"sequencing","choices":[{"id":"a"}]}`)}, true, ""},
		{"likert", []mod{def(`{"interactionType":"likert","scale":[{"id":"1","description":{"sr-Latn-RS":"x"}}]}`)}, true, ""},
		{"matching", []mod{def(`{"interactionType":"matching","source":[{"id":"a"}],"target":[{"id":"b"}]}`)}, true, ""},
		{"performance", []mod{def(`{"interactionType":"performance","steps":[{"id":"a"}]}`)}, true, ""},
		{"true-false", []mod{def(`{"interactionType":"true-false","correctResponsesPattern":["true"]}`)}, true, ""},
		{"fill-in long-fill-in numeric other", []mod{def(`{"interactionType":"numeric","correctResponsesPattern":["1[:]3"]}`)}, true, ""},
		{"interactionType wrong case", []mod{def(`{"interactionType":"Choice"}`)}, false, ""},
		{"interactionType unknown", []mod{def(`{"interactionType":"essay"}`)}, false, ""},
		{"interactionType numeric", []mod{def(`{"interactionType":1}`)}, false, ""},
		{"pattern without interactionType", []mod{def(`{"correctResponsesPattern":["a"]}`)}, false, ""},
		{"choices without interactionType", []mod{def(`{"choices":[{"id":"a"}]}`)}, false, ""},
		{"pattern not strings", []mod{def(`{"interactionType":"other","correctResponsesPattern":[1]}`)}, false, ""},
		{"pattern not array", []mod{def(`{"interactionType":"other","correctResponsesPattern":"a"}`)}, false, ""},
		{"components wrong for type", []mod{def(`{"interactionType":"true-false","choices":[{"id":"a"}]}`)}, false, ""},
		{"component without id", []mod{def(`{"interactionType":"choice","choices":[{"description":{"en":"x"}}]}`)}, false, ""},
		{"component duplicate id", []mod{def(`{"interactionType":"choice","choices":[{"id":"a"},{"id":"a"}]}`)}, false, ""},
		{"component extra property", []mod{def(`{"interactionType":"choice","choices":[{"id":"a","x":1}]}`)}, false, ""},
	})
}

func TestResultRules(t *testing.T) {
	res := func(s string) mod { return mod{"result", raw(s)} }
	runCases(t, []vcase{
		{"full", []mod{res(`{"score":{"scaled":0.95,"raw":95,"min":0,"max":100},"success":true,"completion":false,"response":"r","duration":"PT4H35M59.14S","extensions":{"http://example.com/e":{}}}`)}, true, ""},
		{"scaled -1", []mod{res(`{"score":{"scaled":-1}}`)}, true, ""},
		{"scaled too low", []mod{res(`{"score":{"scaled":-1.00001}}`)}, false, ""},
		{"scaled too high", []mod{res(`{"score":{"scaled":1.01}}`)}, false, ""},
		{"scaled string", []mod{res(`{"score":{"scaled":"0.5"}}`)}, false, ""},
		{"raw below min", []mod{res(`{"score":{"raw":-1,"min":0}}`)}, false, ""},
		{"raw above max", []mod{res(`{"score":{"raw":101,"max":100}}`)}, false, ""},
		{"min above max", []mod{res(`{"score":{"min":10,"max":5}}`)}, false, ""},
		{"score extra", []mod{res(`{"score":{"value":1}}`)}, false, ""},
		{"score not object", []mod{res(`{"score":1}`)}, false, ""},
		{"success string", []mod{res(`{"success":"true"}`)}, false, ""},
		{"completion number", []mod{res(`{"completion":1}`)}, false, ""},
		{"response number", []mod{res(`{"response":1}`)}, false, ""},
		{"duration weeks", []mod{res(`{"duration":"P4W"}`)}, true, ""},
		{"duration fine precision", []mod{res(`{"duration":"P1DT12H36M0.12567S"}`)}, true, ""},
		{"duration weeks and days", []mod{res(`{"duration":"P4W1D"}`)}, false, ""},
		{"duration bare", []mod{res(`{"duration":"P"}`)}, false, ""},
		{"duration dangling T", []mod{res(`{"duration":"P1DT"}`)}, false, ""},
		{"duration number", []mod{res(`{"duration":1}`)}, false, ""},
		{"duration text", []mod{res(`{"duration":"an hour"}`)}, false, ""},
		{"unknown property", []mod{res(`{"grade":"A"}`)}, false, ""},
	})
}

func TestContextRules(t *testing.T) {
	ctx := func(s string) mod { return mod{"context", raw(s)} }
	runCases(t, []vcase{
		{"full", []mod{ctx(`{"registration":"ec531277-b57b-4c15-8d91-d292c5b2b8f7","instructor":{"mbox":"mailto:i@example.com"},"team":{"objectType":"Group","mbox":"mailto:t@example.com"},"revision":"1","platform":"p","language":"cmn","statement":{"objectType":"StatementRef","id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb"},"extensions":{"http://example.com/e":"x"}}`)}, true, ""},
		{"registration not uuid", []mod{ctx(`{"registration":"x"}`)}, false, ""},
		{"team agent", []mod{ctx(`{"team":{"mbox":"mailto:t@example.com"}}`)}, false, ""},
		{"instructor group", []mod{ctx(`{"instructor":{"objectType":"Group","mbox":"mailto:t@example.com"}}`)}, true, ""},
		{"language invalid", []mod{ctx(`{"language":"something"}`)}, false, ""},
		{"language fr-CA", []mod{ctx(`{"language":"fr-CA"}`)}, true, ""},
		{"statement without objectType", []mod{ctx(`{"statement":{"id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}}`)}, false, ""},
		{"revision with agent object", []mod{ctx(`{"revision":"1"}`), {"object", raw(`{"objectType":"Agent","mbox":"mailto:a@example.com"}`)}}, false, ""},
		{"platform with statementref", []mod{ctx(`{"platform":"p"}`), {"object", raw(`{"objectType":"StatementRef","id":"9e13cefd-53d3-4eac-b5ed-2cf6693903bb"}`)}}, false, ""},
		{"revision numeric", []mod{ctx(`{"revision":1}`)}, false, ""},
		{"contextActivities single", []mod{ctx(`{"contextActivities":{"parent":{"id":"http://example.com/p"}}}`)}, true, ""},
		{"contextActivities array", []mod{ctx(`{"contextActivities":{"grouping":[{"id":"http://example.com/g"},{"objectType":"Activity","id":"http://example.com/g2"}],"category":[],"other":[{"id":"http://example.com/o"}]}}`)}, true, ""},
		{"contextActivities bad key", []mod{ctx(`{"contextActivities":{"parents":[]}}`)}, false, ""},
		{"contextActivities agent", []mod{ctx(`{"contextActivities":{"parent":{"objectType":"Agent","mbox":"mailto:a@example.com"}}}`)}, false, ""},
		{"contextActivities string", []mod{ctx(`{"contextActivities":"x"}`)}, false, ""},
		{"contextActivities bad activity", []mod{ctx(`{"contextActivities":{"other":[{"id":"http://example.com/o"},{"key":"value"}]}}`)}, false, ""},
		{"unknown property", []mod{ctx(`{"mood":"x"}`)}, false, ""},
		{"contextAgents in 1.0.3", []mod{ctx(`{"contextAgents":[{"objectType":"contextAgent","agent":{"mbox":"mailto:a@example.com"}}]}`)}, false, V103},
		{"contextAgents", []mod{ctx(`{"contextAgents":[{"objectType":"contextAgent","agent":{"mbox":"mailto:a@example.com"},"relevantTypes":["http://example.com/t"]}]}`)}, true, V200},
		{"contextAgents wrong objectType", []mod{ctx(`{"contextAgents":[{"objectType":"Agent","agent":{"mbox":"mailto:a@example.com"}}]}`)}, false, V200},
		{"contextAgents without objectType", []mod{ctx(`{"contextAgents":[{"agent":{"mbox":"mailto:a@example.com"}}]}`)}, false, V200},
		{"contextAgents group", []mod{ctx(`{"contextAgents":[{"objectType":"contextAgent","agent":{"objectType":"Group","mbox":"mailto:g@example.com"}}]}`)}, false, V200},
		{"contextAgents empty relevantTypes", []mod{ctx(`{"contextAgents":[{"objectType":"contextAgent","agent":{"mbox":"mailto:a@example.com"},"relevantTypes":[]}]}`)}, false, V200},
		{"contextAgents relevantTypes not IRI", []mod{ctx(`{"contextAgents":[{"objectType":"contextAgent","agent":{"mbox":"mailto:a@example.com"},"relevantTypes":["abc"]}]}`)}, false, V200},
		{"contextAgents not array", []mod{ctx(`{"contextAgents":{"objectType":"contextAgent","agent":{"mbox":"mailto:a@example.com"}}}`)}, false, V200},
		{"contextGroups", []mod{ctx(`{"contextGroups":[{"objectType":"contextGroup","group":{"objectType":"Group","mbox":"mailto:g@example.com"},"relevantTypes":["http://example.com/t"]}]}`)}, true, V200},
		{"contextGroups agent", []mod{ctx(`{"contextGroups":[{"objectType":"contextGroup","group":{"mbox":"mailto:g@example.com"}}]}`)}, false, V200},
		{"contextGroups missing group", []mod{ctx(`{"contextGroups":[{"objectType":"contextGroup"}]}`)}, false, V200},
	})
}

func TestTimestampVersionAuthority(t *testing.T) {
	runCases(t, []vcase{
		{"timestamp Z", []mod{{"timestamp", "2013-05-18T05:32:34.804Z"}}, true, ""},
		{"timestamp +00:00", []mod{{"timestamp", "2008-09-15T15:53:00.601+00:00"}}, true, ""},
		{"timestamp future", []mod{{"timestamp", "2031-11-22T00:40:28.079Z"}}, true, ""},
		{"timestamp -00:00", []mod{{"timestamp", "2008-09-15T15:53:00.601-00:00"}}, false, ""},
		{"timestamp -0000", []mod{{"timestamp", "2008-09-15T15:53:00.601-0000"}}, false, ""},
		{"timestamp -00", []mod{{"timestamp", "2008-09-15T15:53:00.601-00"}}, false, ""},
		{"timestamp US date", []mod{{"timestamp", "01/011/2015"}}, false, ""},
		{"timestamp number", []mod{{"timestamp", 1}}, false, ""},
		{"timestamp Feb 30", []mod{{"timestamp", "2015-02-30T00:00:00Z"}}, false, ""},
		{"version 1.0", []mod{{"version", "1.0"}}, true, ""},
		{"version 1.0.9", []mod{{"version", "1.0.9"}}, true, ""},
		{"version 2.0.0 in 2.0", []mod{{"version", "2.0.0"}}, true, V200},
		{"version 2.0.0 in 1.0.3", []mod{{"version", "2.0.0"}}, false, V103},
		{"version 1.1.0", []mod{{"version", "1.1.0"}}, false, ""},
		{"version 0.9.9", []mod{{"version", "0.9.9"}}, false, ""},
		{"version number", []mod{{"version", 1}}, false, ""},
		{"authority agent", []mod{{"authority", raw(`{"mbox":"mailto:a@example.com"}`)}}, true, ""},
		{"authority oauth pair", []mod{{"authority", raw(`{"objectType":"Group","member":[{"account":{"homePage":"http://example.com/oauth","name":"c"}},{"mbox":"mailto:u@example.com"}]}`)}}, true, ""},
		{"authority identified group", []mod{{"authority", raw(`{"objectType":"Group","mbox":"mailto:g@example.com","member":[{"account":{"homePage":"http://example.com/oauth","name":"c"}},{"mbox":"mailto:u@example.com"}]}`)}}, false, ""},
		{"authority three members", []mod{{"authority", raw(`{"objectType":"Group","member":[{"mbox":"mailto:a@example.com"},{"mbox":"mailto:b@example.com"},{"mbox":"mailto:c@example.com"}]}`)}}, false, ""},
		{"authority one member", []mod{{"authority", raw(`{"objectType":"Group","member":[{"mbox":"mailto:a@example.com"}]}`)}}, false, ""},
	})
}

func TestAttachmentRules(t *testing.T) {
	att := func(s string) mod { return mod{"attachments", raw(s)} }
	const sha = "495395e777cd98da653df9615d09c0fd6bb2f8d4788394cd53c56a3bfdcd848a"
	runCases(t, []vcase{
		{"fileUrl", []mod{att(`[{"usageType":"http://example.com/u","display":{"en-US":"a"},"description":{"es-MX":"d"},"contentType":"text/plain","length":27,"sha2":"` + sha + `","fileUrl":"http://example.com/f"}]`)}, true, ""},
		{"signature octet-stream", []mod{att(`[{"usageType":"` + SignatureUsageType + `","display":{"en-US":"s"},"contentType":"application/octet-stream","length":27,"sha2":"` + sha + `"}]`)}, true, ""},
		{"signature text/plain", []mod{att(`[{"usageType":"` + SignatureUsageType + `","display":{"en-US":"s"},"contentType":"text/plain; charset=ascii","length":27,"sha2":"` + sha + `"}]`)}, false, ""},
		{"not array", []mod{att(`{"usageType":"http://example.com/u"}`)}, false, ""},
		{"missing display", []mod{att(`[{"usageType":"http://example.com/u","contentType":"text/plain","length":27,"sha2":"` + sha + `"}]`)}, false, ""},
		{"display bad tag", []mod{att(`[{"usageType":"http://example.com/u","display":{"xx-yy-zz-1":"a"},"contentType":"text/plain","length":27,"sha2":"` + sha + `"}]`)}, false, ""},
		{"usageType not IRI", []mod{att(`[{"usageType":"u","display":{"en":"a"},"contentType":"text/plain","length":27,"sha2":"` + sha + `"}]`)}, false, ""},
		{"length string", []mod{att(`[{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text/plain","length":"27","sha2":"` + sha + `"}]`)}, false, ""},
		{"length fraction", []mod{att(`[{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text/plain","length":2.5,"sha2":"` + sha + `"}]`)}, false, ""},
		{"missing sha2", []mod{att(`[{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text/plain","length":27}]`)}, false, ""},
		{"sha2 not hex", []mod{att(`[{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text/plain","length":27,"sha2":"xyz"}]`)}, false, ""},
		{"fileUrl not IRL", []mod{att(`[{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text/plain","length":27,"sha2":"` + sha + `","fileUrl":"f"}]`)}, false, ""},
		{"bad contentType", []mod{att(`[{"usageType":"http://example.com/u","display":{"en":"a"},"contentType":"text","length":27,"sha2":"` + sha + `"}]`)}, false, ""},
	})
}

func TestParseStatementsForms(t *testing.T) {
	one := stmtJSON()
	for _, c := range []struct {
		name    string
		body    string
		ok, arr bool
		n       int
	}{
		{"object", string(one), true, false, 1},
		{"array", "[" + string(one) + "," + string(one) + "]", true, true, 2},
		{"empty array", "[]", true, true, 0},
		{"string", `"x"`, false, false, 0},
		{"array of strings", `["x"]`, false, true, 0},
		{"trailing garbage", string(one) + "x", false, false, 0},
		{"malformed", `{"actor":`, false, false, 0},
		{"duplicate key", `{"actor":{"mbox":"mailto:a@example.com"},"actor":{"mbox":"mailto:b@example.com"},"verb":{"id":"http://e.com/v"},"object":{"id":"http://e.com/a"}}`, false, false, 0},
		{"invalid utf8", "{\"actor\":{\"mbox\":\"mailto:a@example.com\",\"name\":\"\xff\"},\"verb\":{\"id\":\"http://e.com/v\"},\"object\":{\"id\":\"http://e.com/a\"}}", false, false, 0},
		{"duplicate ids in batch", "[" + string(stmtJSON(mod{"id", "9e13cefd-53d3-4eac-b5ed-2cf6693903bb"})) + "," + string(stmtJSON(mod{"id", "9E13CEFD-53D3-4EAC-B5ED-2CF6693903BB"})) + "]", false, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			stmts, isArr, err := ParseStatements([]byte(c.body), V103)
			if (err == nil) != c.ok {
				t.Fatalf("ok=%v err=%v", c.ok, err)
			}
			if c.ok && (isArr != c.arr || len(stmts) != c.n) {
				t.Fatalf("isArray=%v n=%d", isArr, len(stmts))
			}
		})
	}
}

func TestErrorNamesPath(t *testing.T) {
	_, _, err := ParseStatements(stmtJSON(mod{"actor.mbox", "a@example.com"}), V103)
	if err == nil || err.Error() != `statement.actor.mbox: must be a "mailto:" IRI` {
		t.Fatalf("err = %v", err)
	}
}
