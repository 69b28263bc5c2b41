// Package player holds the course player's browser side: the HTML page that hosts SCORM
// content in an iframe with scorm-again as its SCORM API, and the runtime script, built into
// assets/ at build time (scripts/web-assets.sh) and embedded in the binary. The page's own
// script is JavaScript in page/, inline in the page.
package player

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"slices"

	"github.com/lectern-lms/lectern/learner"
	"github.com/lectern-lms/lectern/server/player/page"
)

//go:embed assets
var assets embed.FS

// RuntimeScript returns the scorm-again bundle; ok is false when the binary was built without
// running scripts/web-assets.sh.
func RuntimeScript() ([]byte, bool) {
	b, err := assets.ReadFile("assets/scorm-again.min.js")
	return b, err == nil
}

// Activity is one entry of the player's table of contents.
type Activity struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Depth int    `json:"depth"`
	// URL is where the iframe loads the activity; empty for a container.
	URL string `json:"url,omitempty"`
	// OwnWindow: the activity (a cmi5 AU with launchMethod OwnWindow) replaces the player
	// page instead of running in its frame, and comes back through its returnURL.
	OwnWindow bool `json:"ownWindow,omitempty"`
	// Hide are the SCORM 2004 SCO's adlnav:hideLMSUI values: while it runs the page hides
	// Previous (previous), Next (continue), Close (exit), Suspend (suspendAll) and Exit (exitAll).
	Hide []string `json:"hide,omitempty"`
}

// Config is what the page's script needs.
type Config struct {
	Title string `json:"title"`
	// Dialect is "1.2", "2004", "aicc" (HACP), "xapi" (launch parameters) or "cmi5" (the
	// cmi5 launch method); the last three get no script API.
	Dialect    string     `json:"dialect"`
	Activities []Activity `json:"activities"`
	// Start is the id of the activity to launch first ("" = the first launchable one).
	Start string `json:"start"`
	// Locked are the activities whose prerequisites are not met (id → the expression); the
	// page disables them in the table of contents and Previous/Next skip them.
	Locked map[string]string `json:"locked,omitempty"`
	// Prerequisites: some activity has prerequisites, so the page asks again which are
	// locked after an activity finishes.
	Prerequisites bool `json:"prerequisites,omitempty"`
	// Returned is the OwnWindow activity the learner came back from (its returnURL): the page
	// does not launch it again, and exits when the course has no other.
	Returned string `json:"returned,omitempty"`
	// RuntimeURL is the session's runtime endpoint base (activity load and commit).
	RuntimeURL string `json:"runtimeUrl"`
	// ScriptURL is where the scorm-again bundle is served.
	ScriptURL string `json:"scriptUrl"`
	// Redirect is what happens on exit: an absolute URL, or closer, blank or message.
	Redirect string `json:"redirect"`
	Preview  bool   `json:"preview"`
	// CommitSeconds is how often the runtime commits while the content runs
	// (PlayerCommCommitFrequency).
	CommitSeconds float64 `json:"commitSeconds"`
	// SuspendDataMax is the most characters of cmi.suspend_data (PlayerSuspendDataMaxLength);
	// SetValue refuses more with the dialect's error code.
	SuspendDataMax int `json:"suspendDataMax"`
	// MaxFailedSubmissions is how many consecutive commits may fail before the learner is
	// told progress is not being saved (PlayerCommMaxFailedSubmissions).
	MaxFailedSubmissions int `json:"maxFailedSubmissions"`
	// FinishCommit commits at LMSFinish/Terminate; false: at the next scheduled commit or
	// when the learner leaves (PlayerFinishCausesImmediateCommit).
	FinishCommit bool `json:"finishCommit"`
	// Chrome is what the page shows around the content and how it opens activities.
	Chrome Chrome `json:"chrome"`
	// Nav is set for a SCORM 2004 course: the sequencer decides what is delivered, and the
	// page asks the runtime's navigate endpoint for every move instead of walking the list
	// itself. It is the sequencer's answer at launch (Deliver is Start).
	Nav *learner.NavState `json:"nav,omitempty"`
}

// Chrome is the player's controls and launch behaviour (the PlayerShow*, PlayerScoLaunchType,
// PromptOnPlayerClose, RedirectOnRefreshUrl and RedirectLaunchPageOnExit settings). The page
// leaves out the controls that are off, rather than hiding them.
type Chrome struct {
	Finish    bool `json:"finish"`
	Close     bool `json:"close"`
	Nav       bool `json:"nav"`
	Progress  bool `json:"progress"`
	Help      bool `json:"help"`
	Title     bool `json:"title"`
	Structure bool `json:"structure"`
	// ScoLaunch is FRAMESET (the content runs in the page's frame) or one of the NEW_WINDOW
	// kinds (it runs in a window of its own and finds the API through window.opener).
	ScoLaunch string `json:"scoLaunch"`
	// PromptOnClose asks the browser to confirm leaving the page other than by Exit.
	PromptOnClose bool `json:"promptOnClose"`
	// RedirectOnRefresh is where a reload of the page after exit goes (as Redirect); empty:
	// the course starts again.
	RedirectOnRefresh string `json:"redirectOnRefresh"`
	// RedirectLaunchPage sends the page that opened the player's window to the exit target
	// and closes the player's window.
	RedirectLaunchPage bool `json:"redirectLaunchPage"`
	// Completed lists the launchable activities already completed, for the progress bar.
	Completed []string `json:"completed"`
	// Total counts the launchable activities.
	Total int `json:"total"`
}

// bar reports whether the page has a top bar at all.
func (c Chrome) bar(preview bool) bool {
	return c.Title || c.Progress || c.Nav || c.Close || c.Help || c.Finish || preview
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
html,body{margin:0;height:100%;font-family:system-ui,sans-serif}
body{display:flex;flex-direction:column}
#bar{display:flex;gap:.5em;align-items:center;padding:.3em .6em;background:#24324a;color:#fff;min-height:2.2em;box-sizing:border-box;flex:none}
#bar h1{font-size:1em;margin:0;overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
#bar .fill{flex:1}
#progress{width:10em;height:.9em;background:#56627a;border-radius:.45em;overflow:hidden}
#progress-fill{display:block;height:100%;background:#8fd694;width:0}
#main{display:flex;flex:1;min-height:0}
#toc{width:16em;overflow:auto;border-right:1px solid #ccc;padding:.5em;box-sizing:border-box}
#toc button{display:block;width:100%;text-align:left;border:0;background:none;padding:.25em;cursor:pointer}
#toc button.current{background:#dde6f5;font-weight:bold}
#toc button:disabled{color:#888;cursor:not-allowed}
#toc div.container,#toc button.container{padding:.25em;color:#555}
#frame{flex:1;border:0;height:100%}
#done,#launch-panel{flex:1;padding:2em}
#help{width:18em;padding:.5em 1em;border-left:1px solid #ccc;overflow:auto}
#warning{padding:.5em .8em;background:#fff3cd;color:#5c4400;border-bottom:1px solid #e0c36a}
#unsaved{position:fixed;left:0;right:0;bottom:0;margin:0;padding:.6em 1em;background:#a4161a;color:#fff;z-index:10}
</style></head>
<body>
{{if .Bar}}<div id="bar">{{if .Chrome.Title}}<h1 id="title">{{.Title}}</h1>{{end}}{{if .Preview}}<span id="preview-note">(preview: nothing is recorded)</span>{{end}}<span class="fill"></span>
{{- if .Chrome.Progress}}<span id="progress" role="progressbar" aria-label="Activities completed" aria-valuemin="0" aria-valuemax="{{.Chrome.Total}}" aria-valuenow="{{.Done}}"><span id="progress-fill"></span></span><span id="progress-text">{{.Done}} of {{.Chrome.Total}} completed</span>{{end}}
{{- if .Chrome.Nav}}<button id="prev" type="button">Previous</button><button id="next" type="button">Next</button>{{end}}
{{- if .Chrome.Close}}<button id="close" type="button">Close</button>{{end}}
{{- if .Chrome.Help}}<button id="help-button" type="button" aria-controls="help" aria-expanded="false">Help</button>{{end}}
{{- if and .Chrome.Finish .Nav}}<button id="suspend" type="button" title="Leave now and resume here next time">Suspend</button>{{end}}
{{- if .Chrome.Finish}}<button id="exit" type="button">Exit</button>{{end}}</div>{{end}}
<div id="warning" role="alert" hidden></div>
<div id="main">{{if .Chrome.Structure}}<nav id="toc" aria-label="Contents"></nav>{{end}}<iframe id="frame" title="Course content"></iframe>
<div id="launch-panel" hidden><p id="launch-text"></p><button id="launch" type="button">Launch</button></div>
<div id="done" hidden>You have finished this course. You can close this window.</div>
{{- if .Chrome.Help}}<aside id="help" hidden><h2>Help</h2><p>The course runs in this window{{if ne .Chrome.ScoLaunch "FRAMESET"}}, each activity in a window of its own{{end}}. Your progress is saved as you go.</p>
<ul>{{if .Chrome.Structure}}<li>Contents: choose an activity to open it.</li>{{end}}{{if .Chrome.Nav}}<li>Previous and Next: go to the activity before or after this one.</li>{{end}}{{if .Chrome.Close}}<li>Close: close this activity without leaving the course.</li>{{end}}{{if .Chrome.Finish}}<li>Exit: save your progress and leave the course.</li>{{end}}{{if .Chrome.Progress}}<li>The bar shows how many activities you have completed.</li>{{end}}</ul></aside>{{end}}</div>
<p id="unsaved" role="alert" hidden>Your progress is not being saved: the server does not accept it. Keep this window open and check your connection, or launch the course again.</p>
<script id="cfg" type="application/json">{{.JSON}}</script>
<script src="{{.ScriptURL}}"></script>
<script>{{.Script}}</script>
</body></html>
`))

// Page renders the player page for cfg.
func Page(cfg Config) ([]byte, error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	done := 0
	for _, a := range cfg.Activities {
		if a.URL != "" && slices.Contains(cfg.Chrome.Completed, a.ID) {
			done++
		}
	}
	err = pageTmpl.Execute(&buf, struct {
		Config
		JSON   template.JS
		Script template.JS
		Bar    bool
		Done   int
	}{cfg, template.JS(js), page.Script(), cfg.Chrome.bar(cfg.Preview), done})
	return buf.Bytes(), err
}

var errorTmpl = template.Must(template.New("error").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}</style></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

// ErrorPage renders the page a learner sees when a launch cannot go ahead.
func ErrorPage(title, text string) []byte {
	var buf bytes.Buffer
	_ = errorTmpl.Execute(&buf, struct{ Title, Text string }{title, text})
	return buf.Bytes()
}

// Launcher is the page a launch link shows when the player opens in a window of its own
// (PlayerLaunchType other than FRAMESET).
type Launcher struct {
	Title string `json:"title"`
	// URL is the player page to open.
	URL string `json:"url"`
	// Features are window.open's features: empty for an ordinary window (a tab, in most
	// browsers), a popup's without toolbar and address bar otherwise.
	Features string `json:"features"`
	// AfterClick waits for the learner's click (browsers let a click open windows).
	AfterClick bool `json:"afterClick"`
}

var launcherTmpl = template.Must(template.New("launcher").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:40em;margin:4em auto;padding:0 1em;color:#222}</style></head>
<body><h1>{{.Title}}</h1>
<p id="launch-text">{{if .AfterClick}}Click Launch to open the course in a new window.{{else}}The course is opening in a new window.{{end}}</p>
<p><button id="launch" type="button">Launch</button></p>
<script id="cfg" type="application/json">{{.JSON}}</script>
<script>
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("cfg").textContent);
  var text = document.getElementById("launch-text"), button = document.getElementById("launch");
  var player = null;
  function open() {
    player = window.open(cfg.url, "lectern-player", cfg.features);
    text.textContent = player ? "The course is open in another window. Click Launch to bring it back." :
      "Your browser blocked the course's window. Click Launch to open it.";
  }
  button.onclick = function () {
    if (player && !player.closed) { player.focus(); return; }
    open();
  };
  // The player calls this on exit when RedirectLaunchPageOnExit is on: this page, not the
  // player's window, goes to the exit target.
  window.lecternExit = function (r) {
    button.hidden = true;
    if (r === "blank") { location.replace("about:blank"); }
    else if (/^https?:/.test(r)) { location.assign(r); }
    else { if (r === "closer") window.close(); text.textContent = "You have finished this course. You can close this window."; }
  };
  if (!cfg.afterClick) open();
})();
</script>
</body></html>
`))

// LauncherPage renders the page that opens the player in a new window.
func LauncherPage(l Launcher) ([]byte, error) {
	js, err := json.Marshal(l)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = launcherTmpl.Execute(&buf, struct {
		Launcher
		JSON template.JS
	}{l, template.JS(js)})
	return buf.Bytes(), err
}
