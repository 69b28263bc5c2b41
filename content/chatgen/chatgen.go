// Package chatgen is a content.Generator on an OpenAI-compatible chat-completions endpoint
// (OpenAI, Ollama, vLLM, llama.cpp server): one request per content version asks for a
// title, a summary, keywords and skills as a JSON object. Against a taxonomy the model
// chooses from a shortlist the built-in generator ranks by embedding similarity (a taxonomy
// of thousands does not fit a prompt), and a skill outside the shortlist is dropped, so the
// taxonomy stays the pool of possible skills; none left is the single content.UnknownSkill.
// A failed or unreadable answer falls back to the built-in generator (OnFallback is told),
// so an outage of the model does not fail content imports.
package chatgen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/lectern-lms/lectern/content"
)

// Generator implements content.Generator.
type Generator struct {
	// BaseURL is the server root; requests go to {BaseURL}/v1/chat/completions (a trailing
	// "/v1" is accepted too).
	BaseURL string
	Model   string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Builtin extracts TITLE and SUMMARY when the model gives none, ranks taxonomy
	// shortlists, and answers when the model fails.
	Builtin *content.Builtin
	// HTTPClient defaults to a client with a 2-minute timeout.
	HTTPClient *http.Client
	// OnFallback, when set, hears why an answer of the model was not used.
	OnFallback func(error)
}

// Limits of one request.
const (
	maxDocumentChars = 12000
	shortlist        = 40
	maxKeywords      = 8
	maxSkills        = 5
	maxAnswerBytes   = 1 << 20
)

type answer struct {
	Title    string   `json:"title"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords"`
	Skills   []string `json:"skills"`
}

// Generate implements content.Generator.
func (g *Generator) Generate(ctx context.Context, in content.GenerateInput) ([]content.GeneratedField, error) {
	var pool []string
	if in.Taxonomy != nil {
		var err error
		if pool, err = g.Builtin.TaxonomyCandidates(ctx, in, shortlist); err != nil {
			return nil, err
		}
	}
	a, err := g.ask(ctx, in, pool)
	if err != nil {
		if g.OnFallback != nil {
			g.OnFallback(err)
		}
		return g.Builtin.Generate(ctx, in)
	}
	types := in.Types
	if len(types) == 0 {
		types = content.FieldTypes
	}
	extracted := map[string]string{}
	for _, f := range content.Fields(in.Title, in.Sections) {
		extracted[f.Type] = f.Value
	}
	var out []content.GeneratedField
	add := func(typ string, vals ...string) {
		if slices.Contains(types, typ) {
			for _, v := range vals {
				out = append(out, content.GeneratedField{Type: typ, Value: v})
			}
		}
	}
	add(content.FieldTitle, cmpOr(clean(a.Title), extracted[content.FieldTitle])...)
	add(content.FieldSummary, cmpOr(clean(a.Summary), extracted[content.FieldSummary])...)
	add(content.FieldKeywords, list(a.Keywords, maxKeywords, nil)...)
	skills := list(a.Skills, maxSkills, pool)
	if in.Taxonomy != nil && len(skills) == 0 {
		skills = []string{content.UnknownSkill}
	}
	if in.Taxonomy == nil {
		skills = slices.DeleteFunc(skills, func(s string) bool { return strings.EqualFold(s, content.UnknownSkill) })
	}
	add(content.FieldSkills, skills...)
	return out, nil
}

func cmpOr(a, b string) []string {
	switch {
	case a != "":
		return []string{a}
	case b != "":
		return []string{b}
	}
	return nil
}

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// list cleans, dedupes and caps values; with a pool, only its members (in its spelling).
func list(vals []string, n int, pool []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, v := range vals {
		v = clean(v)
		if pool != nil {
			i := slices.IndexFunc(pool, func(p string) bool { return strings.EqualFold(p, v) })
			if i < 0 {
				continue
			}
			v = pool[i]
		}
		if v == "" || seen[strings.ToLower(v)] || len(out) >= n {
			continue
		}
		seen[strings.ToLower(v)] = true
		out = append(out, v)
	}
	return out
}

func document(in content.GenerateInput) string {
	var b strings.Builder
	if in.Title != "" {
		fmt.Fprintf(&b, "Title: %s\n", in.Title)
	}
	for _, s := range in.Sections {
		if b.Len() >= maxDocumentChars {
			break
		}
		if s.Heading != "" {
			fmt.Fprintf(&b, "\n## %s\n", s.Heading)
		}
		b.WriteString(s.Text)
		b.WriteByte('\n')
	}
	d := b.String()
	if len(d) > maxDocumentChars {
		d = strings.ToValidUTF8(d[:maxDocumentChars], "")
	}
	return d
}

func (g *Generator) ask(ctx context.Context, in content.GenerateInput, pool []string) (*answer, error) {
	sys := "You write metadata for learning content. Answer with one JSON object only: " +
		`{"title": string, "summary": string (at most 2 sentences), "keywords": [up to 8 short key phrases], "skills": [up to 5 skills a learner practises]}.`
	if pool != nil {
		sys += " Choose skills only from this list, spelled exactly as listed; if none is relevant, give an empty list: " + mustJSON(pool)
	}
	body := mustJSON(map[string]any{
		"model": g.Model, "temperature": 0,
		"response_format": map[string]any{"type": "json_object"},
		"messages":        []map[string]string{{"role": "system", "content": sys}, {"role": "user", "content": document(in)}},
	})
	base := strings.TrimSuffix(strings.TrimSuffix(g.BaseURL, "/"), "/v1")
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/completions", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if g.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+g.APIKey)
	}
	client := g.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: 2 * time.Minute}
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("chat completions: %w", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswerBytes))
	if err != nil {
		return nil, fmt.Errorf("chat completions: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("chat completions: HTTP %d: %s", res.StatusCode, bytes.TrimSpace(raw[:min(len(raw), 300)]))
	}
	var cr struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &cr); err != nil || len(cr.Choices) == 0 {
		return nil, errors.New("chat completions: no choices in the answer")
	}
	text := strings.TrimSpace(cr.Choices[0].Message.Content)
	if i, j := strings.IndexByte(text, '{'), strings.LastIndexByte(text, '}'); i >= 0 && j > i {
		text = text[i : j+1] // a model that wraps the object in prose or a code fence
	}
	var a answer
	if err := json.Unmarshal([]byte(text), &a); err != nil {
		return nil, fmt.Errorf("chat completions: the answer is not the JSON object asked for: %w", err)
	}
	return &a, nil
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
