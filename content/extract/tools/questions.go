package tools

import (
	"strings"

	"github.com/lectern-lms/lectern/content/extract/jsdata"
)

// Interaction is one question found in the content, in the spec's shape
// (content_details.interactions). content/extract publishes it under the same name; it is
// defined here because the tool readers build it and cannot import extract, which imports
// them.
type Interaction struct {
	Question string   `json:"question"`
	Choices  []Choice `json:"choices"`
	Feedback []string `json:"feedback"`
	// Type uses the xAPI interactionType vocabulary (choice, true-false, fill-in,
	// long-fill-in, matching, sequencing, likert, numeric, performance, other), since every
	// tool maps its question kinds onto it for reporting anyway.
	Type string `json:"type"`
	// Range is the accepted interval of a numeric question; nil for every other kind.
	Range *Range `json:"range"`
}

// Choice is one answer option of an Interaction.
type Choice struct {
	Text      string `json:"text"`
	IsCorrect bool   `json:"is_correct"`
	// Category is the target a matching or categorisation option belongs to; nil otherwise.
	Category *string `json:"category"`
}

// Range is a numeric interval; a nil bound is open. The spec only says "nullable", so this
// is the smallest shape that carries a numeric question's correct response.
type Range struct {
	Min *float64 `json:"min"`
	Max *float64 `json:"max"`
}

// findQuestions walks tool data for question-shaped objects: a question text (question,
// prompt, stem, title…) next to a list of answer options (choices, answers, options) of
// which at least one says whether it is correct. Requiring the correctness flag keeps
// ordinary lists (menus, tabs) from being taken for questions. The JSON tools we read (Rise
// knowledge checks and quizzes, Storyline quiz slides, Elucidat question data) have that
// shape under varying key names; Captivate, iSpring and Lectora have their own readers.
// It reports false once the host has no room for more questions, which ends the walk.
func findQuestions(h Host, v any, depth int) bool {
	if depth > jsdata.MaxDepth {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		if in, ok := asQuestion(x); ok {
			return h.AddInteraction(in)
		}
		for _, k := range jsdata.SortedKeys(x) {
			if !findQuestions(h, x[k], depth+1) {
				return false
			}
		}
	case []any:
		for _, it := range x {
			if !findQuestions(h, it, depth+1) {
				return false
			}
		}
	}
	return true
}

var correctKeys = []string{"correct", "isCorrect", "is_correct", "isAnswer", "status", "right"}

func asQuestion(m map[string]any) (Interaction, bool) {
	q := jsdata.StripTags(jsdata.Str(m, "question", "prompt", "stem", "questionText", "title", "text", "body"))
	opts := jsdata.Arr(m, "choices", "answers", "options", "distractors")
	if q == "" || len(opts) == 0 {
		return Interaction{}, false
	}
	in := Interaction{Question: q, Type: questionType(jsdata.Str(m, "type", "questionType", "variant", "kind"))}
	flagged := false
	for _, o := range opts {
		om, ok := o.(map[string]any)
		if !ok {
			if s, ok := o.(string); ok && jsdata.StripTags(s) != "" {
				in.Choices = append(in.Choices, Choice{Text: jsdata.StripTags(s)})
			}
			continue
		}
		c := Choice{Text: jsdata.StripTags(jsdata.Str(om, "text", "title", "label", "answer", "content", "value"))}
		for _, k := range correctKeys {
			if v, ok := om[k]; ok {
				flagged = true
				c.IsCorrect = jsdata.Truthy(v)
				break
			}
		}
		if cat := jsdata.StripTags(jsdata.Str(om, "matchTitle", "match", "category", "target", "group")); cat != "" {
			c.Category = &cat
		}
		if c.Text != "" || c.Category != nil {
			in.Choices = append(in.Choices, c)
		}
		if fb := jsdata.StripTags(jsdata.Str(om, "feedback")); fb != "" {
			in.Feedback = append(in.Feedback, fb)
		}
	}
	if !flagged {
		return Interaction{}, false
	}
	if in.Type == "choice" && len(in.Choices) == 2 && isTrueFalse(in.Choices) {
		in.Type = "true-false"
	}
	if in.Type == "choice" {
		for _, c := range in.Choices {
			if c.Category != nil {
				in.Type = "matching"
				break
			}
		}
	}
	in.Feedback = append(feedbackOf(m), in.Feedback...)
	return in, true
}

func isTrueFalse(cs []Choice) bool {
	a, b := strings.ToLower(cs[0].Text), strings.ToLower(cs[1].Text)
	return (a == "true" && b == "false") || (a == "false" && b == "true")
}

// feedbackOf reads question-level feedback: a string, a list, or an object of strings
// (correct / incorrect / tryAgain).
func feedbackOf(m map[string]any) []string {
	var out []string
	for _, k := range []string{"feedback", "correctFeedback", "incorrectFeedback", "feedbackCorrect", "feedbackIncorrect"} {
		switch v := m[k].(type) {
		case string:
			if s := jsdata.StripTags(v); s != "" {
				out = append(out, s)
			}
		case []any:
			for _, it := range v {
				if s, ok := it.(string); ok && jsdata.StripTags(s) != "" {
					out = append(out, jsdata.StripTags(s))
				}
			}
		case map[string]any:
			for _, kk := range jsdata.SortedKeys(v) {
				if s, ok := v[kk].(string); ok && jsdata.StripTags(s) != "" {
					out = append(out, jsdata.StripTags(s))
				}
			}
		}
	}
	return out
}

// questionType maps the tools' question kind names onto the xAPI interactionType values.
func questionType(t string) string {
	l := strings.ToLower(strings.NewReplacer("_", "", "-", "", " ", "").Replace(t))
	switch {
	case l == "":
		return "choice"
	case strings.Contains(l, "truefalse"):
		return "true-false"
	case strings.Contains(l, "fillin"), strings.Contains(l, "blank"), strings.Contains(l, "textentry"), strings.Contains(l, "shortanswer"):
		return "fill-in"
	case strings.Contains(l, "essay"), strings.Contains(l, "longfill"):
		return "long-fill-in"
	case strings.Contains(l, "match"), strings.Contains(l, "dragdrop"), strings.Contains(l, "categor"):
		return "matching"
	case strings.Contains(l, "sequenc"), strings.Contains(l, "order"):
		return "sequencing"
	case strings.Contains(l, "likert"), strings.Contains(l, "survey"), strings.Contains(l, "scale"):
		return "likert"
	case strings.Contains(l, "numeric"):
		return "numeric"
	case strings.Contains(l, "hotspot"), strings.Contains(l, "performance"):
		return "performance"
	}
	return "choice"
}
