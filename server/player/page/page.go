// Package page holds the player page's script as JavaScript files, so that node can lint and
// test them (values_test.js); the player embeds them in its page (server/player).
//
//   - values.js: the SCORM 2004 run-time's checks of data model values (no DOM, no API);
//   - scorm2004.js: the SCORM 2004 API's set-up over scorm-again, using values.js;
//   - page.js: the page itself (navigation, sequencing controls, windows, sessions).
package page

import (
	_ "embed"
	"html/template"
	"strings"
)

var (
	//go:embed values.js
	values string
	//go:embed scorm2004.js
	scorm2004 string
	//go:embed page.js
	page string
)

// Script is the page's inline script: the files, each after the ones it uses, in one
// function, so that the names they declare stay off the window the content can read
// (parent.scorm2004API) as they did when the script was one function.
func Script() template.JS {
	return template.JS(strings.Join([]string{"(function () {", values, scorm2004, page, "})();"}, "\n"))
}
