package tools

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/base64"
	"path"
	"regexp"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/jsdata"
	"github.com/lectern-lms/lectern/content/extract/textnorm"
)

// iSpring Suite publishes a presentation as an index.html whose head comments name the tool
// and its version, and whose player script carries the presentation as base64 of zlib-packed
// JSON; each quiz in it is a data/quizN.js holding the quiz as base64 JSON. iSpring QuizMaker
// publishing a quiz on its own puts that quiz JSON in index.html itself:
//
//	<!-- Created with iSpring --><!-- 979 682 --><!--version 11.2.3.9020 --><!--type html -->
//	var presInfo = "eNrV…";      → {"ct":"course title","ui":"isfree_11.2.3_9020;",
//	                                "s":[{"t":"slide title","s":"data/slide1.js","x":"slide text\r\n…"},
//	                                     {"st":"q","s":"data/quiz1.js","t":""},…]}
//	data/quiz1.js: var quizInfo = "eyJk…";    (QuizMaker alone: index.html, var data = "eyJk…")
//	  → {"d":{"T":"quiz title","sl":{"g":[{"T":"Question Group","s":{"st":"allQuestions","rs":-1},
//	      "S":[{"tp":"MultipleChoice","D":{"d":["question"]},
//	            "C":{"chs":[{"t":{"d":["answer"]},"c":true},…]},
//	            "s":{"F":{"c":{"v":{"d":["feedback if right"]}},"i":{"v":{"d":["…if wrong"]}}}}},
//	           {"tp":"TypeIn","C":{"chs":[{"t":"accepted answer"}]}},
//	           {"tp":"Matching","C":{"m":[{"p":{"t":{"d":["premise"]}},"r":{"t":{"d":["response"]}}}]}}]}]}}}
//
// Modelled on public iSpring output: RonanK84/ispringtest (iSpring Free 11.2.3.9020, a
// presentation with a quiz slide) and MilanIsmagulov/ispring_tests (11.3.0.4, a QuizMaker
// quiz with multiple-choice, multiple-response and matching questions).

var (
	ispringVersion  = regexp.MustCompile(`<!--\s*version\s+([0-9]+(?:\.[0-9]+)+)\s*-->`)
	ispringPresInfo = regexp.MustCompile(`\bpresInfo\s*=\s*"([A-Za-z0-9+/=]+)"`)
	ispringQuizInfo = regexp.MustCompile(`\b(?:quizInfo|data)\s*=\s*"([A-Za-z0-9+/=]+)"`)
)

// ispringDecode decodes a base64 payload to JSON, inflating it first when it is zlib-packed
// (presInfo is, quiz data is not). The host inflates it, so its limits hold for the
// inflated size.
func ispringDecode(h Host, b64 []byte) (map[string]any, bool) {
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
	n, err := base64.StdEncoding.Decode(raw, b64)
	if err != nil {
		return nil, false
	}
	raw = raw[:n]
	if len(raw) > 1 && raw[0] == 0x78 {
		zr, err := zlib.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, false
		}
		defer zr.Close()
		inflated, ok := h.Inflate("iSpring data", zr)
		if !ok {
			return nil, false
		}
		raw = inflated
	}
	v, ok := jsdata.Parse(raw)
	m, _ := v.(map[string]any)
	return m, ok && m != nil
}

// ispring reads the presentation's slides (title and the text iSpring keeps for search,
// "x") and the questions of every quiz in it; a QuizMaker quiz published alone counts its
// questions as its slides.
func ispring(ctx context.Context, h Host, files *Files, t *Tool) {
	launch := ""
	var head []byte
	for _, n := range []string{"index.html", "index_lms.html", "res/index.html"} {
		if r, ok := files.Real(n); ok {
			raw, err := h.ReadFile(r)
			if err != nil {
				continue
			}
			if m := ispringPresInfo.FindSubmatch(raw); m != nil {
				launch, head = r, m[1]
				break
			}
			if m := ispringQuizInfo.FindSubmatch(raw); m != nil && launch == "" {
				if quiz, ok := ispringDecode(h, m[1]); ok {
					t.setCount(ispringQuiz(h, quiz, ""))
					return
				}
			}
		}
	}
	if head == nil {
		h.Warn("iSpring presentation data not found; slides not read")
		return
	}
	pres, ok := ispringDecode(h, head)
	if !ok {
		h.Warn("iSpring %s: presentation data not readable", launch)
		return
	}
	t.Title = textnorm.CollapseSpace(jsdata.Str(pres, "ct"))
	count := 0
	var headings textnorm.HeadingTrail
	for _, s := range jsdata.Arr(pres, "s") {
		slide, _ := s.(map[string]any)
		if slide == nil {
			continue
		}
		count++
		title := textnorm.CollapseSpace(jsdata.Str(slide, "t"))
		loc := title
		if loc == "" {
			loc = "Slide " + itoa(count)
		}
		if jsdata.Str(slide, "st") == "q" {
			ispringQuizFile(h, files, path.Clean(jsdata.Str(slide, "s")), loc)
			continue
		}
		var lines []string
		for _, l := range strings.FieldsFunc(jsdata.Str(slide, "x"), func(r rune) bool { return r == '\r' || r == '\n' }) {
			if l = textnorm.CollapseSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		text := strings.Join(lines, "\n")
		h.AddSection(loc, headings.Next([]string{title}, text), text)
	}
	t.setCount(count)
}

// ispringQuizFile reads one quiz of a presentation (data/quizN.js).
func ispringQuizFile(h Host, files *Files, name, loc string) {
	real, ok := files.Real(name)
	if !ok || strings.HasPrefix(name, "..") {
		h.Warn("iSpring quiz %s not found", name)
		return
	}
	raw, err := h.ReadFile(real)
	if err != nil {
		h.Warn("iSpring quiz %s: %v", real, err)
		return
	}
	m := ispringQuizInfo.FindSubmatch(raw)
	if m == nil {
		h.Warn("iSpring quiz %s: quiz data not found", real)
		return
	}
	quiz, ok := ispringDecode(h, m[1])
	if !ok {
		h.Warn("iSpring quiz %s: quiz data not readable", real)
		return
	}
	ispringQuiz(h, quiz, loc)
}

// ispringQuiz adds a quiz's questions, one section per question under the quiz's location,
// and returns how many questions a learner is shown: every question of a group, or the
// number a group draws at random (a guess at the field: "rs" when the group's "st" is not
// allQuestions; only allQuestions groups have been seen).
func ispringQuiz(h Host, quiz map[string]any, loc string) int {
	d, _ := quiz["d"].(map[string]any)
	if loc == "" {
		loc = textnorm.CollapseSpace(jsdata.Str(d, "T"))
	}
	if loc == "" {
		loc = "Quiz"
	}
	sl, _ := d["sl"].(map[string]any)
	shown := 0
	for _, g := range jsdata.Arr(sl, "g") {
		group, _ := g.(map[string]any)
		if group == nil {
			continue
		}
		n := 0
		for _, q := range jsdata.Arr(group, "S") {
			qm, _ := q.(map[string]any)
			if qm == nil {
				continue
			}
			if v, ok := qm["v"]; ok && !jsdata.Truthy(v) {
				continue
			}
			n++
			in, ok := ispringQuestion(qm)
			if !ok {
				continue
			}
			h.AddSection(loc+" > Question "+itoa(shown+n), "", in.Question)
			h.AddInteraction(in)
		}
		if gs, _ := group["s"].(map[string]any); gs != nil && jsdata.Str(gs, "st") != "allQuestions" {
			if draw, ok := jsdata.Num(gs, "rs"); ok && draw > 0 && draw < n {
				n = draw
			}
		}
		shown += n
	}
	return shown
}

// ispringText reads iSpring's rich text: {"d":["paragraph",…]} (plain text, one entry per
// paragraph), or a plain string as TypeIn answers have.
func ispringText(v any) string {
	switch x := v.(type) {
	case string:
		return textnorm.CollapseSpace(x)
	case map[string]any:
		var lines []string
		for _, p := range jsdata.Arr(x, "d") {
			if s, ok := p.(string); ok {
				if s = textnorm.CollapseSpace(s); s != "" {
					lines = append(lines, s)
				}
			}
		}
		if len(lines) == 0 {
			return jsdata.StripTags(jsdata.Str(x, "a", "h"))
		}
		return strings.Join(lines, "\n")
	}
	return ""
}

// ispringTypes maps iSpring's question kinds (tp) onto xAPI interaction types. The kinds seen
// in published quizzes are MultipleChoice, MultipleResponse, TypeIn and Matching; the others
// are iSpring QuizMaker's documented kinds under the names its other kinds follow.
var ispringTypes = map[string]string{
	"MultipleChoice": "choice", "MultipleResponse": "choice", "TrueFalse": "true-false", "YesNo": "choice",
	"TypeIn": "fill-in", "Matching": "matching", "Sequence": "sequencing", "Numeric": "numeric",
	"FillInTheBlank": "fill-in", "MultipleChoiceText": "fill-in", "WordBank": "fill-in",
	"Hotspot": "performance", "DragAndDrop": "matching", "Likert": "likert", "Essay": "long-fill-in",
}

// ispringQuestion reads one question; info slides and result slides are not questions.
func ispringQuestion(q map[string]any) (Interaction, bool) {
	tp := jsdata.Str(q, "tp")
	typ, known := ispringTypes[tp]
	if !known {
		if tp == "InfoSlide" || tp == "ResultSlide" || tp == "" {
			return Interaction{}, false
		}
		typ = questionType(tp)
	}
	in := Interaction{Question: ispringText(q["D"]), Type: typ}
	c, _ := q["C"].(map[string]any)
	for _, ch := range jsdata.Arr(c, "chs") {
		cm, _ := ch.(map[string]any)
		text := ispringText(cm["t"])
		if text == "" {
			continue
		}
		// A TypeIn question lists only the answers it accepts.
		in.Choices = append(in.Choices, Choice{Text: text, IsCorrect: jsdata.Truthy(cm["c"]) || tp == "TypeIn"})
	}
	for _, p := range jsdata.Arr(c, "m") {
		pm, _ := p.(map[string]any)
		premise, _ := pm["p"].(map[string]any)
		response, _ := pm["r"].(map[string]any)
		text, cat := ispringText(premise["t"]), ispringText(response["t"])
		if text == "" && cat == "" {
			continue
		}
		ch := Choice{Text: text, IsCorrect: cat != ""}
		if cat != "" {
			ch.Category = &cat
		}
		in.Choices = append(in.Choices, ch)
	}
	if s, _ := q["s"].(map[string]any); s != nil {
		if f, _ := s["F"].(map[string]any); f != nil {
			for _, k := range []string{"c", "i", "pc"} {
				fm, _ := f[k].(map[string]any)
				if t := ispringText(fm["v"]); t != "" {
					in.Feedback = append(in.Feedback, t)
				}
			}
		}
	}
	if in.Question == "" && len(in.Choices) == 0 {
		return Interaction{}, false
	}
	return in, true
}
