package chatgen

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/lectern-lms/lectern/content"
	"github.com/lectern-lms/lectern/content/extract"
	"github.com/lectern-lms/lectern/content/taxonomy"
)

var sections = []extract.Section{{Heading: "Knives", Text: "Keep knives sharp. Knife safety matters."},
	{Heading: "Baking", Text: "Bake the carrot cake at 180 degrees."}}

// model is a loopback chat-completions server answering with reply (or failing with status).
func model(t *testing.T, status int, reply string, seen *map[string]any) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			t.Errorf("request %s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
		if seen != nil {
			_ = json.NewDecoder(r.Body).Decode(seen)
		}
		if status != 200 {
			http.Error(w, "overloaded", status)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": reply}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func values(fs []content.GeneratedField, typ string) []string {
	var out []string
	for _, f := range fs {
		if f.Type == typ {
			out = append(out, f.Value)
		}
	}
	return out
}

func TestGenerate(t *testing.T) {
	var req map[string]any
	srv := model(t, 200, "```json\n"+`{"title":"Kitchen  safety","summary":"Knives and cakes.","keywords":["knife safety","baking","Baking"],"skills":["Knife handling","Unknown"]}`+"\n```", &req)
	g := &Generator{BaseURL: srv.URL + "/v1", Model: "m1", APIKey: "k", Builtin: &content.Builtin{}}
	fs, err := g.Generate(context.Background(), content.GenerateInput{Title: "Kitchen Safety Basics", Sections: sections})
	if err != nil {
		t.Fatal(err)
	}
	if got := values(fs, content.FieldTitle); !slices.Equal(got, []string{"Kitchen safety"}) {
		t.Errorf("title %q", got)
	}
	if got := values(fs, content.FieldKeywords); !slices.Equal(got, []string{"knife safety", "baking"}) {
		t.Errorf("keywords %q (deduplicated ignoring case)", got)
	}
	if got := values(fs, content.FieldSkills); !slices.Equal(got, []string{"Knife handling"}) {
		t.Errorf("free skills %q: Unknown never without a taxonomy", got)
	}
	msgs, _ := json.Marshal(req["messages"])
	if req["model"] != "m1" || !strings.Contains(string(msgs), "carrot cake") {
		t.Errorf("request %v", req)
	}
}

func TestGenerateWithTaxonomy(t *testing.T) {
	var req map[string]any
	tax := &taxonomy.Taxonomy{ID: "t", Skills: []string{"Knife safety", "Baking", "Welding"}}
	srv := model(t, 200, `{"title":"","summary":"","keywords":[],"skills":["knife SAFETY","Juggling","Welding"]}`, &req)
	g := &Generator{BaseURL: srv.URL, Model: "m", APIKey: "k", Builtin: &content.Builtin{}}
	fs, err := g.Generate(context.Background(), content.GenerateInput{Title: "Kitchen", Sections: sections, Types: []string{content.FieldSkills, content.FieldTitle}, Taxonomy: tax})
	if err != nil {
		t.Fatal(err)
	}
	// The shortlist (word mode: skills whose words occur) excludes Welding, so the model's
	// Welding is dropped like its invented Juggling; the spelling is the taxonomy's.
	if got := values(fs, content.FieldSkills); !slices.Equal(got, []string{"Knife safety"}) {
		t.Errorf("skills %q", got)
	}
	if got := values(fs, content.FieldTitle); !slices.Equal(got, []string{"Kitchen"}) || len(values(fs, content.FieldSummary)) != 0 {
		t.Errorf("an empty title falls back to the extracted one, and only requested types come back: %v", fs)
	}
	msgs, _ := json.Marshal(req["messages"])
	if !strings.Contains(string(msgs), `Knife safety`) || strings.Contains(string(msgs), "Welding") {
		t.Errorf("system prompt without the shortlist: %s", msgs)
	}

	srv = model(t, 200, `{"skills":[]}`, nil)
	g.BaseURL = srv.URL
	fs, _ = g.Generate(context.Background(), content.GenerateInput{Sections: sections, Types: []string{content.FieldSkills}, Taxonomy: tax})
	if got := values(fs, content.FieldSkills); !slices.Equal(got, []string{content.UnknownSkill}) {
		t.Errorf("no relevant taxonomy skill: %q, want [Unknown]", got)
	}
}

func TestFallback(t *testing.T) {
	for _, srv := range []*httptest.Server{model(t, 503, "", nil), model(t, 200, "I cannot do that.", nil)} {
		var why error
		g := &Generator{BaseURL: srv.URL, Model: "m", APIKey: "k", Builtin: &content.Builtin{}, OnFallback: func(err error) { why = err }}
		fs, err := g.Generate(context.Background(), content.GenerateInput{Title: "Kitchen", Sections: sections})
		if err != nil || why == nil || len(values(fs, content.FieldKeywords)) == 0 {
			t.Errorf("fallback: fields %v, error %v, told %v", fs, err, why)
		}
	}
}
