// Package console is the web console (/console/): its HTTP handlers, which render pages from
// the answers of the JSON API called in process (console.go), the HTML templates they render
// and the static assets served under /console/assets/. htmx and Pico CSS are copied into
// assets/ at build time from pinned npm packages (scripts/web-assets.sh) and embedded in the
// binary; console.css and console.js are Lectern's own.
package console

import (
	"embed"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"strings"
	"time"
)

//go:embed assets templates
var files embed.FS

// Asset returns a static file of assets/ by its base name; ok is false for an unknown name.
func Asset(name string) (b []byte, ok bool) {
	if name == "" || strings.ContainsAny(name, `/\`) {
		return nil, false
	}
	b, err := files.ReadFile("assets/" + name)
	return b, err == nil
}

// Installed reports whether the npm libraries were built into the binary.
func Installed() bool {
	_, a := Asset("htmx.min.js")
	_, b := Asset("pico.min.css")
	return a && b
}

// Templates renders the console's pages. Each page file defines "title" and "main"; the
// layout wraps them. A fragment (a template named in a page file) renders alone for htmx.
type Templates struct {
	pages map[string]*template.Template
}

// Funcs are the helpers every template may call.
func Funcs() template.FuncMap {
	return template.FuncMap{
		"pct": func(done, total int) int {
			if total <= 0 {
				return 0
			}
			return min(100, done*100/total)
		},
		"time": func(v any) string {
			switch t := v.(type) {
			case time.Time:
				if t.IsZero() {
					return ""
				}
				return t.UTC().Format("2006-01-02 15:04:05")
			case string:
				if p, err := time.Parse(time.RFC3339Nano, t); err == nil {
					return p.UTC().Format("2006-01-02 15:04:05")
				}
				return t
			}
			return fmt.Sprint(v)
		},
		"seq": func(n int) []int {
			s := make([]int, max(n, 0))
			for i := range s {
				s[i] = i
			}
			return s
		},
	}
}

// Load parses the layout with every page of templates/.
func Load() (*Templates, error) {
	base, err := template.New("layout.html").Funcs(Funcs()).ParseFS(files, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	t := &Templates{pages: map[string]*template.Template{}}
	for _, n := range names {
		page := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if page == "layout" {
			continue
		}
		c, err := base.Clone()
		if err != nil {
			return nil, err
		}
		if _, err := c.ParseFS(files, n); err != nil {
			return nil, fmt.Errorf("console template %s: %w", n, err)
		}
		t.pages[page] = c
	}
	return t, nil
}

// Page renders a whole page (the layout around the page's "main").
func (t *Templates) Page(w io.Writer, page string, data any) error {
	p, ok := t.pages[page]
	if !ok {
		return fmt.Errorf("console: no page %q", page)
	}
	return p.ExecuteTemplate(w, "layout.html", data)
}

// Fragment renders one named template of a page alone (an htmx swap).
func (t *Templates) Fragment(w io.Writer, page, name string, data any) error {
	p, ok := t.pages[page]
	if !ok {
		return fmt.Errorf("console: no page %q", page)
	}
	return p.ExecuteTemplate(w, name, data)
}
