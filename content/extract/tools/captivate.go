package tools

import (
	"bytes"
	"context"
	"regexp"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/jsdata"
	"github.com/lectern-lms/lectern/content/extract/textnorm"
)

// Adobe Captivate (Classic, versions 8 to 12) publishes its course model as one JavaScript
// object literal in assets/js/CPM.js, assigned as cp.D = cp.model.data = {…} ahead of the
// minified runtime, and a JSON project.txt naming the generator:
//
//	project.txt: {"metadata":{"generator":"Captivate","generatorVersion":"11.5.5",
//	              "title":"…","totalSlides":44,…},…}
//	CPM.js:      project_main:{…,slides:'Slide9149,Slide9745',questions:'Slide25483q0'},
//	             Slide9149:{lb:'label',st:'Normal Slide',si:[{n:'Text_Caption_9',t:19},…],qs:''},
//	             Text_Caption_9:{type:19,mdi:'Text_Caption_9c',apsn:'Slide9149',vt:'<div>…</div>',
//	                             rpvt:{1024:{vt:'…',text:'Let’s Learn the Law'}}},
//	             Text_Caption_9c:{dn:'Text_Caption_9',visible:1,accstr:'Let’s Learn the Law '},
//	             Slide25483q0:{qt:'…',itp:'choice',qtp:'MCQ',cal:['B'],ao:['si25192c:0',…],
//	                           qtc:'si25177c',osc:'si25374',ifc:['si25393'],frc:'si25351',is:false},
//	             si25192c:{aid:'A',atxtlms:'answer text',ic:false,accstr:'…'},
//	             si124421_q1_answer_0_mcfib:{aid:0,correctAnswers:['ée'],cs:false,type:'fib'}
//
// Modelled on public Captivate output: ADPUB/Copyright---Fair-UseSimulation (11.5.5, slides
// and captions), Amol160685/InteractivityExamples.github.io (a multiple-choice question
// slide), Astro1218/SCORM (fill-in-the-blank questions, project_main.questions) and
// AT-Training/AT_Course_Intro101 (9.0.0); in all four project.txt's totalSlides equals the
// length of project_main.slides.

// captivateData finds the model literal in CPM.js.
var captivateData = regexp.MustCompile(`cp\.(?:model\.data|D)\s*=\s*(?:cp\.(?:model\.data|D)\s*=\s*)?\{`)

// captivateProject reads project.txt's metadata, or nil.
func captivateProject(h Host, files *Files) map[string]any {
	real, ok := files.Real("project.txt")
	if !ok {
		return nil
	}
	raw, err := h.ReadFile(real)
	if err != nil {
		return nil
	}
	v, _ := jsdata.Parse(bytes.TrimPrefix(raw, []byte("\xef\xbb\xbf")))
	root, _ := v.(map[string]any)
	md, _ := root["metadata"].(map[string]any)
	return md
}

// captivate reads the slides Captivate publishes, in project_main.slides order (the slides
// that play: Captivate does not publish hidden slides), each with the text of its items, and
// each question slide's question.
func captivate(ctx context.Context, h Host, files *Files, t *Tool) {
	if md := captivateProject(h, files); md != nil {
		t.Title = textnorm.CollapseSpace(jsdata.Str(md, "title"))
	}
	real, ok := files.Real("assets/js/CPM.js")
	if !ok {
		h.Warn("Captivate CPM.js not found; slide structure not read")
		return
	}
	raw, err := h.ReadFile(real)
	if err != nil {
		h.Warn("Captivate %s: %v", real, err)
		return
	}
	loc := captivateData.FindIndex(raw)
	if loc == nil {
		h.Warn("Captivate %s: course model not found", real)
		return
	}
	v, complete := jsdata.Literal(raw[loc[1]-1:])
	d, _ := v.(map[string]any)
	if !complete {
		h.Warn("Captivate %s: course model read only in part", real)
	}
	main, _ := d["project_main"].(map[string]any)
	if main == nil {
		h.Warn("Captivate %s: slide list not found", real)
		return
	}
	cp := cpModel(d)
	count := 0
	var headings textnorm.HeadingTrail
	for _, id := range strings.Split(jsdata.Str(main, "slides"), ",") {
		if id = strings.TrimSpace(id); id == "" {
			continue
		}
		count++
		slide := cp.obj(id)
		title := textnorm.CollapseSpace(jsdata.Str(slide, "lb"))
		label := title
		if label == "" {
			label = "Slide " + itoa(count)
		}
		var parts []string
		seen := map[string]bool{label: true}
		for _, it := range jsdata.Arr(slide, "si") {
			ref, _ := it.(map[string]any)
			if s := cp.text(jsdata.Str(ref, "n")); s != "" && !seen[s] {
				seen[s] = true
				parts = append(parts, s)
			}
		}
		// The slide's label is its title, the name given to an unlabelled one is not.
		text := strings.Join(parts, "\n")
		h.AddSection(label, headings.Next([]string{title}, text), text)
		if qs := jsdata.Str(slide, "qs"); qs != "" {
			if in, ok := cp.question(qs); ok {
				h.AddInteraction(in)
			}
		}
	}
	t.setCount(count)
}

// cpModel is the decoded CPM.js model: every slide, item and display object is a top-level
// key of it.
type cpModel map[string]any

func (cp cpModel) obj(key string) map[string]any {
	m, _ := cp[key].(map[string]any)
	return m
}

// display is an item's display object (mdi, or the item's name with "c"), which holds its
// visibility and accessibility text.
func (cp cpModel) display(key string) map[string]any {
	if d := cp.obj(jsdata.Str(cp.obj(key), "mdi")); d != nil {
		return d
	}
	return cp.obj(key + "c")
}

// text is what an item shows: the responsive text (rpvt's text), its HTML (vt), or the
// accessibility text its display object keeps, which is all a fixed-size project has (its
// captions are drawn as pictures). Items hidden at the start (feedback captions, state
// copies) are not slide text.
func (cp cpModel) text(key string) string {
	it := cp.obj(key)
	if it == nil || it["bstin"] != nil {
		return ""
	}
	// Pictures (15) and click boxes (13) carry only Captivate's default labels ("Image",
	// "Click Box") in their accessibility text.
	if typ, _ := jsdata.Num(it, "type"); typ == 13 || typ == 15 {
		return ""
	}
	disp := cp.display(key)
	if v, ok := disp["visible"]; ok && !jsdata.Truthy(v) {
		return ""
	}
	if rp, ok := it["rpvt"].(map[string]any); ok {
		for _, k := range jsdata.SortedKeys(rp) {
			if m, ok := rp[k].(map[string]any); ok {
				if s := cpClean(jsdata.Str(m, "text")); s != "" {
					return s
				}
			}
		}
	}
	if s := cpClean(jsdata.StripTags(jsdata.Str(it, "vt"))); s != "" {
		return s
	}
	// A picture's accessibility text defaults to its item name, which is no text at all.
	if s := cpClean(jsdata.Str(disp, "accstr")); s != key && s != jsdata.Str(disp, "dn") {
		return s
	}
	return ""
}

// cpClean turns Captivate's paragraph mark (U+0003 in accessibility text) into a line break
// and drops the player's variable placeholders ($$cpInfoCurrentSlide$$).
func cpClean(s string) string {
	s = strings.ReplaceAll(s, "\x03", "\n")
	for {
		i := strings.Index(s, "$$")
		if i < 0 {
			break
		}
		j := strings.Index(s[i+2:], "$$")
		if j < 0 {
			break
		}
		s = s[:i] + s[i+2+j+2:]
	}
	var lines []string
	for _, l := range strings.Split(s, "\n") {
		if l = textnorm.CollapseSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}

// xapiTypes are the interactionType values Captivate writes in a question's itp.
var xapiTypes = map[string]bool{"choice": true, "true-false": true, "fill-in": true, "long-fill-in": true,
	"matching": true, "sequencing": true, "likert": true, "numeric": true, "performance": true, "other": true}

// question reads a question slide's question object: its text (the question caption the
// learner sees, else qt), its answers (ao: display objects "key:index") and which are right
// (ic on the answer, or its aid listed in cal), a blank's accepted answers, and the feedback
// captions (osc success, ifc failure, frc retry).
func (cp cpModel) question(key string) (Interaction, bool) {
	q := cp.obj(key)
	if q == nil {
		return Interaction{}, false
	}
	text := cpClean(jsdata.Str(cp.obj(jsdata.Str(q, "qtc")), "accstr"))
	if text == "" {
		text = cpClean(jsdata.StripTags(jsdata.Str(q, "qt")))
	}
	typ := strings.ToLower(jsdata.Str(q, "itp"))
	if !xapiTypes[typ] {
		typ = questionType(jsdata.Str(q, "qtp"))
	}
	in := Interaction{Question: text, Type: typ}
	correct := map[string]bool{}
	for _, c := range jsdata.Arr(q, "cal") {
		if s, ok := c.(string); ok {
			correct[s] = true
		}
	}
	for _, a := range jsdata.Arr(q, "ao") {
		ref, _ := a.(string)
		name, _, _ := strings.Cut(ref, ":")
		ans := cp.obj(name)
		if ans == nil {
			continue
		}
		if blanks := jsdata.Arr(ans, "correctAnswers"); blanks != nil {
			// A blank: every listed answer is accepted.
			for _, b := range blanks {
				if s, ok := b.(string); ok && textnorm.CollapseSpace(s) != "" && !hasChoice(in.Choices, textnorm.CollapseSpace(s)) {
					in.Choices = append(in.Choices, Choice{Text: textnorm.CollapseSpace(s), IsCorrect: true})
				}
			}
			continue
		}
		t := cpClean(jsdata.Str(ans, "atxtlms"))
		if t == "" {
			t = cpClean(jsdata.Str(ans, "accstr"))
		}
		if t == "" {
			continue
		}
		aid := ""
		switch x := ans["aid"].(type) {
		case string:
			aid = x
		}
		in.Choices = append(in.Choices, Choice{Text: t, IsCorrect: jsdata.Truthy(ans["ic"]) || (aid != "" && correct[aid])})
	}
	seen := map[string]bool{}
	fb := func(k string) {
		if s := cpClean(jsdata.Str(cp.display(k), "accstr")); s != "" && !seen[s] {
			seen[s] = true
			in.Feedback = append(in.Feedback, s)
		}
	}
	fb(jsdata.Str(q, "osc"))
	for _, k := range jsdata.Arr(q, "ifc") {
		if s, ok := k.(string); ok {
			fb(s)
		}
	}
	fb(jsdata.Str(q, "frc"))
	if in.Question == "" && len(in.Choices) == 0 {
		return Interaction{}, false
	}
	return in, true
}

// isCaptivateProject reports whether project.txt names Captivate as its generator; the new
// Captivate (12.4 and later) keeps its model elsewhere but still writes project.txt.
func isCaptivateProject(h Host, files *Files) bool {
	return strings.EqualFold(jsdata.Str(captivateProject(h, files), "generator"), "Captivate")
}

func hasChoice(cs []Choice, text string) bool {
	for _, c := range cs {
		if c.Text == text {
			return true
		}
	}
	return false
}
