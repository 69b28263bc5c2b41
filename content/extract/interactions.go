package extract

import (
	"bytes"
	"encoding/xml"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/lectern-lms/lectern/content/extract/jsdata"
	"github.com/lectern-lms/lectern/content/extract/textnorm"
	"github.com/lectern-lms/lectern/content/extract/tools"
)

// tincan.xml may describe interaction activities for reporting (Rustici's format, which
// the xAPI parser course/tincan ignores because they are not launchable):
//
//	<activity id="…" type="http://adlnet.gov/expapi/activities/cmi.interaction">
//	  <name>…</name><description>question</description>
//	  <interactionType>choice</interactionType>
//	  <correctResponsePatterns><correctResponsePattern>a[,]b</correctResponsePattern></…>
//	  <choices><component><id>a</id><description>Alpha</description></component></choices>
//	  <source>…</source><target>…</target><scale>…</scale><steps>…</steps>
//	</activity>
type tcDoc struct {
	Activities []tcActivity `xml:"activities>activity"`
}

type tcActivity struct {
	Type            string        `xml:"type,attr"`
	Names           []langText    `xml:"name"`
	Descriptions    []langText    `xml:"description"`
	InteractionType string        `xml:"interactionType"`
	Patterns        []string      `xml:"correctResponsePatterns>correctResponsePattern"`
	Choices         []tcComponent `xml:"choices>component"`
	Scale           []tcComponent `xml:"scale>component"`
	Source          []tcComponent `xml:"source>component"`
	Target          []tcComponent `xml:"target>component"`
	Steps           []tcComponent `xml:"steps>component"`
}

type tcComponent struct {
	ID           string     `xml:"id"`
	Descriptions []langText `xml:"description"`
}

type langText struct {
	Lang string `xml:"lang,attr"`
	Text string `xml:",chardata"`
}

// pick prefers the language-neutral value, then the first non-empty one, as course/tincan
// does for names.
func pick(v []langText) string {
	for _, t := range v {
		if l := strings.ToLower(t.Lang); (l == "" || l == "und") && strings.TrimSpace(t.Text) != "" {
			return textnorm.CollapseSpace(t.Text)
		}
	}
	for _, t := range v {
		if s := textnorm.CollapseSpace(t.Text); s != "" {
			return s
		}
	}
	return ""
}

func newXMLDecoder(data []byte) *xml.Decoder {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	// Non-UTF-8 declarations: read the bytes as they are; names and text are what we want.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	return d
}

func (e *extractor) tincanInteractions(fsys fs.FS, files *tools.Files) {
	real, ok := files.Real("tincan.xml")
	if !ok {
		return
	}
	data, err := e.readFile(fsys, real)
	if err != nil {
		return
	}
	var doc tcDoc
	if err := newXMLDecoder(data).Decode(&doc); err != nil {
		return
	}
	for _, a := range doc.Activities {
		it := strings.TrimSpace(a.InteractionType)
		if it == "" {
			continue
		}
		q := pick(a.Descriptions)
		if q == "" {
			q = pick(a.Names)
		}
		in := Interaction{Question: q, Type: it}
		pattern := ""
		if len(a.Patterns) > 0 {
			pattern = strings.TrimSpace(a.Patterns[0])
		}
		correct := map[string]bool{}
		for _, p := range strings.Split(pattern, "[,]") {
			if p != "" {
				correct[p] = true
			}
		}
		comps := func(cs []tcComponent) {
			for _, c := range cs {
				in.Choices = append(in.Choices, Choice{Text: pick(c.Descriptions), IsCorrect: correct[strings.TrimSpace(c.ID)]})
			}
		}
		switch it {
		case "choice", "sequencing":
			comps(a.Choices)
		case "likert":
			comps(a.Scale)
		case "performance":
			comps(a.Steps)
		case "true-false":
			in.Choices = []Choice{{Text: "True", IsCorrect: pattern == "true"}, {Text: "False", IsCorrect: pattern == "false"}}
		case "fill-in", "long-fill-in":
			for _, p := range strings.Split(pattern, "[,]") {
				if p = strings.TrimSpace(stripBraces(p)); p != "" {
					in.Choices = append(in.Choices, Choice{Text: p, IsCorrect: true})
				}
			}
		case "matching":
			// Each source item is a choice whose category is the target it matches.
			targets := map[string]string{}
			for _, t := range a.Target {
				targets[strings.TrimSpace(t.ID)] = pick(t.Descriptions)
			}
			pairs := map[string]string{}
			for _, p := range strings.Split(pattern, "[,]") {
				if s, t, ok := strings.Cut(p, "[.]"); ok {
					pairs[strings.TrimSpace(s)] = strings.TrimSpace(t)
				}
			}
			for _, s := range a.Source {
				c := Choice{Text: pick(s.Descriptions)}
				if t, ok := pairs[strings.TrimSpace(s.ID)]; ok {
					cat := targets[t]
					if cat == "" {
						cat = t
					}
					c.Category, c.IsCorrect = &cat, true
				}
				in.Choices = append(in.Choices, c)
			}
		case "numeric":
			in.Range = numericRange(pattern)
		}
		e.addInteraction(in)
	}
}

// stripBraces drops the {case_matters=…} / {lang=…} prefixes of xAPI response patterns.
func stripBraces(p string) string {
	for strings.HasPrefix(p, "{") {
		i := strings.IndexByte(p, '}')
		if i < 0 {
			break
		}
		p = p[i+1:]
	}
	return p
}

// numericRange reads "1[:]5", "[:]5", "3" into a Range.
func numericRange(p string) *Range {
	if p == "" {
		return nil
	}
	lo, hi, isRange := strings.Cut(p, "[:]")
	if !isRange {
		hi = lo
	}
	r := &Range{}
	if f, err := strconv.ParseFloat(strings.TrimSpace(lo), 64); err == nil {
		r.Min = &f
	}
	if f, err := strconv.ParseFloat(strings.TrimSpace(hi), 64); err == nil {
		r.Max = &f
	}
	if r.Min == nil && r.Max == nil {
		return nil
	}
	return r
}

// QTI 2.x items (assessmentItem files, as exported by test banks and some tools): choice
// interactions only; other QTI interaction kinds are left alone.
type qtiItem struct {
	Title     string        `xml:"title,attr"`
	Responses []qtiResponse `xml:"responseDeclaration"`
	Body      struct {
		Choices []qtiChoiceInteraction `xml:",any"`
	} `xml:"itemBody"`
	Feedback []qtiInner `xml:"modalFeedback"`
}

type qtiResponse struct {
	ID     string   `xml:"identifier,attr"`
	Values []string `xml:"correctResponse>value"`
}

type qtiChoiceInteraction struct {
	XMLName     xml.Name
	ResponseID  string                 `xml:"responseIdentifier,attr"`
	MaxChoices  string                 `xml:"maxChoices,attr"`
	Prompt      qtiInner               `xml:"prompt"`
	Choices     []qtiSimpleChoice      `xml:"simpleChoice"`
	InnerChoice []qtiChoiceInteraction `xml:",any"`
}

type qtiSimpleChoice struct {
	ID    string `xml:"identifier,attr"`
	Inner string `xml:",innerxml"`
}

type qtiInner struct {
	Inner string `xml:",innerxml"`
}

func (e *extractor) qtiInteractions(fsys fs.FS, files *tools.Files) {
	looked := 0
	for _, p := range files.Paths() {
		if !strings.HasSuffix(strings.ToLower(p), ".xml") || looked >= 2000 || e.ctx.Err() != nil {
			continue
		}
		head := e.probe(fsys, files, p)
		if !bytes.Contains(head, []byte("assessmentItem")) {
			continue
		}
		looked++
		data, err := e.readFile(fsys, p)
		if err != nil {
			continue
		}
		var item qtiItem
		if err := newXMLDecoder(data).Decode(&item); err != nil {
			continue
		}
		correct := map[string]map[string]bool{}
		for _, r := range item.Responses {
			m := map[string]bool{}
			for _, v := range r.Values {
				m[strings.TrimSpace(v)] = true
			}
			correct[r.ID] = m
		}
		var fb []string
		for _, f := range item.Feedback {
			if s := jsdata.StripTags(f.Inner); s != "" {
				fb = append(fb, s)
			}
		}
		var visit func(ci qtiChoiceInteraction, depth int)
		visit = func(ci qtiChoiceInteraction, depth int) {
			if depth > 8 {
				return
			}
			if ci.XMLName.Local == "choiceInteraction" {
				q := jsdata.StripTags(ci.Prompt.Inner)
				if q == "" {
					q = textnorm.CollapseSpace(item.Title)
				}
				in := Interaction{Question: q, Type: "choice", Feedback: fb}
				for _, c := range ci.Choices {
					in.Choices = append(in.Choices, Choice{Text: jsdata.StripTags(c.Inner), IsCorrect: correct[ci.ResponseID][strings.TrimSpace(c.ID)]})
				}
				e.addInteraction(in)
				return
			}
			for _, c := range ci.InnerChoice {
				visit(c, depth+1)
			}
		}
		for _, ci := range item.Body.Choices {
			visit(ci, 0)
		}
	}
}
