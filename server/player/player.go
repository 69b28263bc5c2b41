// Package player holds the course player's browser side: the HTML page that hosts SCORM
// content in an iframe with scorm-again as its SCORM API, and the runtime script, built into
// assets/ at build time (scripts/web-assets.sh) and embedded in the binary.
package player

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
	"slices"

	"github.com/lectern-lms/lectern/learner"
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
<script>
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("cfg").textContent);
  var chrome = cfg.chrome || {};
  function $(id) { return document.getElementById(id); }
  var frame = $("frame"), toc = $("toc");
  var scos = cfg.activities.filter(function (a) { return a.url; });
  var current = -1, api = null, exiting = false, leaving = false;
  var buttons = {}, items = {};
  var locked = cfg.locked || {}; // activities whose prerequisites are not met
  // SCORM 2004: the sequencer on the server decides (docs/sequencing.md). seq is its latest
  // view (table of contents, request_valid answers); navBusy while the page's own request
  // runs; pageGoing once the page unloads (commits then go by beacon).
  var seq = cfg.dialect === "2004" && cfg.nav ? cfg.nav : null, navBusy = false, pageGoing = false, lastCommitNav = null, sentRequest = "", suspending = false;
  // The page's state across a reload of the same tab: exited, so a reload goes where
  // RedirectOnRefreshUrl says.
  var exitKey = "lectern-exited:" + cfg.runtimeUrl;
  cfg.activities.forEach(function (a) {
    if (!toc) return;
    var el;
    if (a.url || seq) {
      // SCORM 2004: a cluster may be chosen too (the sequencer flows into it, ADL CM-17b);
      // the sequencer's table of contents says when.
      el = document.createElement("button"); el.type = "button";
      if (!a.url) el.className = "container";
      el.onclick = function () { if (seq) navigate("choice", a.id); else go(scos.indexOf(a)); };
      buttons[a.id] = el;
    } else {
      el = document.createElement("div"); el.className = "container";
    }
    items[a.id] = el;
    el.textContent = a.title || a.id;
    el.style.paddingLeft = (a.depth * 0.8 + 0.25) + "em";
    toc.appendChild(el);
  });
  function responseHandler(xhr) {
    try { var r = JSON.parse(xhr.responseText); if (r && r.reason) sessionNotice(r); if (r && r.nav) commitNav(r.nav); if (r && "result" in r) return { result: r.result, errorCode: r.errorCode || 0 }; } catch (e) {}
    return xhr.status >= 200 && xhr.status < 300 ? { result: "true", errorCode: 0 } : { result: "false", errorCode: 101 };
  }
  // A single-SCO course exits when its SCO finishes; in a multi-SCO course the learner goes
  // on with the table of contents or Previous/Next, or leaves with Exit.
  function finished() {
    setTimeout(refreshLocks, 250); // the finish may have met another activity's prerequisites
    if (exiting || scos.length < 2) setTimeout(exit, 0);
  }
  function go(i) {
    if (i < 0 || i >= scos.length) return;
    if (locked[scos[i].id]) { applyLocks(); return; }
    if (current >= 0) heartbeat(); // the time so far belongs to the activity being left
    var a = scos[i];
    current = i;
    Object.keys(buttons).forEach(function (id) { buttons[id].classList.toggle("current", id === a.id); });
    applyLocks();
    unload();
    // AICC AUs talk HACP to the server themselves (aicc_sid and aicc_url are in their URL).
    // xAPI activities get the record store's endpoint and credential in theirs.
    // A cmi5 AU of launchMethod OwnWindow takes the whole window (a window of its own when
    // the player is itself framed) and comes back through its returnURL.
    if (a.ownWindow) { ownWindow(a.url); return; }
    if (cfg.dialect === "aicc" || cfg.dialect === "xapi" || cfg.dialect === "cmi5") { show(a.url); return; }
    if (seq) api = null; // the SCO being left is not the one a navigation request ends
    var req = new XMLHttpRequest();
    req.open("GET", cfg.runtimeUrl + "/activity?activity=" + encodeURIComponent(a.id));
    req.onload = function () {
      if (req.status !== 200) { showMessage("This activity cannot be launched: " + req.responseText); return; }
      var state = JSON.parse(req.responseText);
      if (seq && state.nav) { seq = state.nav; drawNav(); }
      var settings = {
        lmsCommitUrl: cfg.runtimeUrl + "/commit?activity=" + encodeURIComponent(a.id) + "&attempt=" + state.attempt,
        dataCommitFormat: "flattened", includeCommitSequence: true, sendFullCommit: true, terminateCommitParam: "terminate",
        autocommit: true, autocommitSeconds: cfg.commitSeconds || 10, alwaysSendTotalTime: true,
        autoCompleteLessonStatus: true, // SCORM 1.2: LMSFinish without a status completes (browse: browsed)
        xhrResponseHandler: responseHandler, logLevel: 4
      };
      var api2004 = null; // this load's SCORM 2004 API, whose commits carry its shared data
      if (seq || cfg.dialect === "2004") settings.requestHandler = function (params, meta) {
        if (api2004) params = sharedWrites(api2004, params);
        return seq ? pendingRequest(params, meta) : params;
      };
      flushFinish();
      if (cfg.dialect === "2004") {
        api = api2004 = window.API_1484_11 = new window.Scorm2004API(settings);
        leavesOnly(api);
        conform2004(api);
        sharedData(api, state);
        api.on("Terminate", seq ? seqTerminated : finished);
        if (seq) sequenced(api);
        api.on("SetValue.cmi.completion_status", function (el, v) { if (v === "completed") progressed(a.id); });
      } else {
        api = window.API = new window.Scorm12API(settings);
        api.on("LMSFinish", finished);
        api.on("LMSSetValue.cmi.core.lesson_status", function (el, v) { if (v === "completed" || v === "passed") progressed(a.id); });
      }
      runtimeSettings(api);
      loadState(api, state.cmi);
      show(a.url);
    };
    req.send();
  }
  // loadState gives the API the activity's stored data. scorm-again 3.4.3 loads the elements
  // outside cmi.interactions and cmi.objectives in the order of their names as text, and an
  // interaction's entries by field name as text: comments_from_learner.10 came before .2 and
  // was refused (its index past the end), so only ten comments came back (ADL DMI). The
  // collections' elements are loaded first, one at a time, by index as a number, an entry's
  // id (and an interaction's type) before the rest; the others as scorm-again loads them.
  var indexed = /^cmi\.(interactions|comments_from_learner|comments_from_lms)\.\d+\./;
  function loadState(a, flat) {
    function rank(seg) { return seg === "id" ? 0 : seg === "type" ? 1 : 2; }
    function order(x, y) {
      var p = x.split("."), q = y.split(".");
      for (var i = 0; i < p.length && i < q.length; i++) {
        if (p[i] === q[i]) continue;
        var np = /^\d+$/.test(p[i]), nq = /^\d+$/.test(q[i]);
        if (np && nq) return +p[i] - +q[i];
        if (rank(p[i]) !== rank(q[i])) return rank(p[i]) - rank(q[i]);
        return p[i] < q[i] ? -1 : 1;
      }
      return p.length - q.length;
    }
    var rest = {};
    Object.keys(flat || {}).filter(function (k) {
      if (indexed.test(k)) return true;
      rest[k] = flat[k];
      return false;
    }).sort(order).forEach(function (k) {
      var one = {};
      one[k] = flat[k];
      try { a.loadFromFlattenedJSON(one, ""); } catch (e) {}
      // A response scorm-again refuses that the RTE allows (stored by conform2004). An empty
      // pattern reads as "" from a correct response that is not there, so that is not
      // taken for loaded (ADL DMI's fill-in correct_responses.1-4 came back missing).
      var rm = responseElement.exec(k);
      if (rm && (cmiRaw(a, k) !== flat[k] ||
          (rm[3] !== undefined && +rm[3] >= cmiCount(a, "cmi.interactions." + rm[1] + ".correct_responses")))) {
        setResponse(a, k, flat[k], function (e, v) { var p = {}; p[e] = v; a.loadFromFlattenedJSON(p, ""); });
      }
    });
    a.loadFromFlattenedJSON(rest, "");
  }
  // --- SCORM 2004 sequencing: the server's sequencer decides what comes next ---
  function scoIndex(id) {
    for (var i = 0; i < scos.length; i++) if (scos[i].id === id) return i;
    return -1;
  }
  // drawNav shows the sequencer's table of contents (hidden, disabled) and Previous/Next.
  function drawNav() {
    (seq.toc || []).forEach(function (e) {
      if (items[e.id]) items[e.id].hidden = !e.visible;
      if (buttons[e.id]) {
        buttons[e.id].disabled = !e.enabled;
        if (!e.enabled) buttons[e.id].title = "Not available now"; else buttons[e.id].removeAttribute("title");
      }
    });
    var ctl = seq.controls || {};
    if ($("prev")) $("prev").disabled = !ctl.previous;
    if ($("next")) $("next").disabled = !ctl.continue;
    // The running SCO's adlnav:hideLMSUI: it offers these itself (adl.nav.request).
    var hide = (scos[current] && scos[current].hide) || [];
    [["prev", "previous"], ["next", "continue"], ["close", "exit"], ["suspend", "suspendAll"], ["exit", "exitAll"]].forEach(function (c) {
      if ($(c[0])) $(c[0]).hidden = hide.indexOf(c[1]) >= 0;
    });
  }
  // act follows the sequencer's answer: deliver an activity, or end the session.
  function act(nav) {
    seq = nav;
    drawNav();
    if (nav.sessionEnded) { exit(); return; }
    if (nav.deliver && scoIndex(nav.deliver) >= 0) { go(scoIndex(nav.deliver)); return; }
    if (nav.message) showMessage("This is not possible now: " + nav.message);
  }
  // navigate runs the learner's request: the running SCO ends first (its outcome reaches the
  // sequencer with its terminating commit), then the server decides.
  function navigate(request, target) {
    if (navBusy || !seq) return;
    var v = seq.valid || {}, ctl = seq.controls || {};
    if ((request === "continue" && !ctl.continue) || (request === "previous" && !ctl.previous) ||
        (request === "choice" && !(v.choice || {})[target])) { drawNav(); return; }
    navBusy = true;
    endSco(function () {
      var req = new XMLHttpRequest();
      req.open("POST", cfg.runtimeUrl + "/navigate?request=" + encodeURIComponent(request) + (target ? "&target=" + encodeURIComponent(target) : ""));
      req.onload = function () {
        navBusy = false;
        var r = null;
        try { r = JSON.parse(req.responseText); } catch (e) {}
        if (r && r.reason) { sessionNotice(r); return; }
        if (req.status !== 200 || !r) { showMessage("The course cannot go on: " + ((r && r.message) || req.status)); return; }
        act(r);
      };
      req.onerror = function () { navBusy = false; showMessage("The course cannot go on: the server does not answer."); };
      req.send();
    });
  }
  // endSco unloads the running SCO and waits (2 s at most) for its Terminate; a SCO that does
  // not terminate is terminated for it, so its data is committed before the request.
  function endSco(done) {
    var a = api;
    unload();
    if (!a || !a.isInitialized()) { done(); return; }
    var waited = 0, t = setInterval(function () {
      waited += 50;
      if (!a.isInitialized()) { clearInterval(t); done(); return; }
      if (waited >= 2000) { clearInterval(t); try { a.Terminate(""); } catch (e) {} done(); }
    }, 50);
  }
  // The terminating commit carries the SCO's pending adl.nav.request (scorm-again does not
  // send it), unless the learner's own request is what ends the SCO.
  // A status the SCO never set is not reported: scorm-again's full commit carries every
  // default, and an "unknown" completion or success status the content did not set would
  // stop the sequencer from applying its own (completionSetByContent false: the LMS
  // completes the attempt; ADL SX-02).
  var defaulted = /^cmi\.(objectives\.\d+\.)?(completion_status|success_status)$/;
  function pendingRequest(params, meta) {
    // The learner's Suspend suspends the SCO whatever its cmi.exit says, so its next session
    // resumes (entry resume) where this one was left.
    if (meta && meta.isTerminateCommit && suspending) params["cmi.exit"] = "suspend";
    if (meta && meta.isTerminateCommit && !navBusy && !exiting && api && api.adl && api.adl.nav) {
      var r = api.adl.nav.request;
      if (r && r !== "_none_") params["adl.nav.request"] = sentRequest = r;
    }
    if (api && api.lecternSet) {
      Object.keys(params).forEach(function (k) {
        if (defaulted.test(k) && params[k] === "unknown" && !api.lecternSet[k]) delete params[k];
      });
    }
    return params;
  }
  function commitNav(nav) {
    lastCommitNav = nav;
    seq = nav;
    drawNav();
  }
  // seqTerminated: the SCO terminated by itself; its terminating commit's answer says what
  // its pending request delivers. Without one the learner goes on with the controls (a
  // single-SCO course exits, as before).
  function seqTerminated() {
    if (navBusy) return;
    var nav = lastCommitNav, request = sentRequest;
    lastCommitNav = null;
    sentRequest = "";
    if (nav && (nav.deliver || nav.sessionEnded || nav.exception)) { setTimeout(function () { act(nav); }, 0); return; }
    // The SCO asked to leave (exit) and nothing follows on its own: the LMS takes it away and
    // the learner picks what comes next (ADL SX-09).
    if (seq && request && scos.length > 1) { unload(); showMessage("This activity has ended. Choose what comes next from the contents or the controls."); return; }
    finished();
  }
  // sequenced prepares a SCORM 2004 API: its terminating commit goes synchronously while the
  // page stays (so the sequencer's answer arrives with it), and adl.nav.request_valid.* are
  // answered from the sequencer's view.
  function sequenced(a) {
    var hs = a._httpService;
    if (hs && typeof hs.processHttpRequest === "function") {
      var phr = hs.processHttpRequest;
      hs.processHttpRequest = function () {
        var args = Array.prototype.slice.call(arguments);
        if (args[2] && !pageGoing) args[2] = false;
        return phr.apply(hs, args);
      };
    }
    var setter = a.SetValue;
    a.lecternSet = {}; // the elements the SCO set in this session
    a.SetValue = function (el, v) {
      var ok = setter.apply(a, arguments);
      if (typeof el === "string") a.lecternSet[el] = true;
      // cmi.exit is write-only to the SCO (scorm-again's getter throws): the player keeps
      // what the SCO left there for its Exit button.
      if (el === "cmi.exit" && ok === "true") a.lecternExitValue = String(v);
      return ok;
    };
    var get = a.GetValue;
    a.GetValue = function (el) {
      if (seq && typeof el === "string" && el.indexOf("adl.nav.request_valid.") === 0 && a.isInitialized()) {
        var v = navValid(el.slice("adl.nav.request_valid.".length));
        if (v !== null) { a.lastErrorCode = "0"; return v; }
      }
      return get.apply(a, arguments);
    };
  }
  // leavesOnly: GetValue and SetValue of a name that is not a data model element but one
  // of its containers ("cmi", "adl", "cmi.score", "adl.nav") answer 401 (undefined data model
  // element). scorm-again 3.4.3 returns the container's object and, on SetValue, replaces it
  // with the string, so the API breaks (its Terminate throws; ADL DMI, docs/scorm-again.md).
  function leavesOnly(a) {
    function container(el) {
      if (typeof el !== "string" || !a.isInitialized() || typeof a.getCMIValue !== "function") return false;
      var code = a.lastErrorCode, v;
      try { v = a.getCMIValue(el); } catch (e) { v = null; }
      a.lastErrorCode = code;
      return v !== null && typeof v === "object";
    }
    var get = a.GetValue, set = a.SetValue;
    a.GetValue = function (el) {
      if (container(el)) { a.lastErrorCode = "401"; return ""; }
      return get.apply(a, arguments);
    };
    a.SetValue = function (el) {
      if (container(el)) { a.lastErrorCode = "401"; return "false"; }
      return set.apply(a, arguments);
    };
  }
  // conform2004 puts the SCORM 2004 RTE's own checks in front of scorm-again 3.4.3 where it
  // answers otherwise (ADL DMI). What the SCO sets in error is not stored, so the commit
  // stays one the server accepts.
  var collections = /^cmi\.(objectives|interactions|comments_from_learner|comments_from_lms)\.([^.]*)\.(.+)$/;
  var nested = /^(objectives|correct_responses)\.([^.]*)\.(.+)$/;
  var canonicalIndex = /^(0|[1-9]\d*)$/;
  // RTE 4.1.1.6 (long_identifier_type): a URI, so no spaces, and a URN has its NID and NSS.
  function identifier(v) {
    if (v === "" || /\s/.test(v)) return false;
    return !/^urn:/i.test(v) || /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:\S+$/i.test(v);
  }
  // RTE 4.1.1.7 (time (second,10,0)): years 1970-2038, at most two decimals of a second.
  var timeRE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.\d{1,2})?)?)?(?:Z|[+-]\d{2}(?::\d{2})?)?)?)?)?$/;
  function time(v) {
    var m = timeRE.exec(v);
    if (!m) return false;
    var y = +m[1], mo = m[2] ? +m[2] : 1, d = m[3] ? +m[3] : 1;
    return y >= 1970 && y <= 2038 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 &&
      (!m[4] || +m[4] < 24) && (!m[5] || +m[5] < 60) && (!m[6] || +m[6] < 60);
  }
  // RTE 4.1.1.8 (timeinterval (second,10,2)): P[nY][nM][nD][T[nH][nM][n[.nn]S]], a T only
  // before a time part.
  var durationRE = /^P(?:\d+Y)?(?:\d+M)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d{1,2})?S)?)?$/;
  function duration(v) { return durationRE.test(v) && v !== "P" && !/T$/.test(v); }
  // The characterstring elements an empty value is valid for (RTE 4.2: an empty
  // characterstring is a value); scorm-again 3.4.3 answers 406.
  var blankable = /^cmi\.(location|suspend_data|learner_preference\.language|comments_from_learner\.\d+\.(location|comment)|objectives\.\d+\.description|interactions\.\d+\.description)$/;
  // --- SCORM 2004 interaction responses (RTE 4.2.9.1, as ADL's InteractionValidator reads
  // it), checked before scorm-again 3.4.3, which refuses some valid ones and takes some
  // invalid ones. ---
  var comma = "[,]";
  // A short_identifier_type is a URI (RTE 4.1.1.6): no spaces nor the characters a URI
  // may not hold, a scheme followed by something, a % only as an escape.
  function uri(v) {
    if (v.trim() === "" || /[\s{}\[\]"<>\\^\x60|]/.test(v) || /%(?![0-9A-Fa-f]{2})/.test(v) || v.split("#").length > 2) return false;
    var scheme = /^[A-Za-z][A-Za-z0-9+.-]*:(.*)$/.exec(v);
    if (scheme && scheme[1] === "") return false;
    return !/^urn:/i.test(v) || /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:\S+$/i.test(v);
  }
  // --- language_type (RTE 4.1.1.7: an RFC 3066 language code) as ADL's LangStringValidator
  // reads it: a primary subtag from ISO 639 (639-1's two letters, 639-2's three, or a local
  // qaa-qtz), x- for a private code, or a tag IANA registered; a second subtag of two
  // letters is an ISO 3166 country. A well-formed code of no such language ("frl", "sp",
  // "ruq-JM") is not one: ADL DMI expects 406 for it, which scorm-again's pattern does not
  // give. ---
  function words(s) { var o = {}; s.split(" ").forEach(function (w) { o[w] = true; }); return o; }
  var iso639a2 = words("aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mo mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve vi vo wa wo xh yi yo za zh zu");
  var iso639a3 = words("aar abk ace ach ada ady afa afh afr aka akk alb ale alg amh ang apa ara arc arg arm arn arp art arw asm ast ath aus ava ave awa aym aze bad bai bak bal bam ban baq bas bat bej bel bem ben ber bho bih bik bin bis bla bnt bod bos bra bre btk bua bug bul bur byn cad cai car cat cau ceb cel ces cha chb che chg chi chk chm chn cho chp chr chu chv chy cmc cop cor cos cpe cpf cpp cre crh crp csb cus cym cze dak dan dar day del den deu dgr din div doi dra dsb dua dum dut dyu dzo efi egy eka ell elx eng enm epo est eus ewe ewo fan fao fas fat fij fil fin fiu fon fra fre frm fro fry ful fur gaa gay gba gem geo ger gez gil gla gle glg glv gmh goh gon gor got grb grc gre grn guj gwi hai hat hau haw heb her hil him hin hit hmn hmo hrv hsb hun hup hye iba ibo ice ido iii ijo iku ile ilo ina inc ind ine inh ipk ira iro isl ita jav jbo jpn jpr jrb kaa kab kac kal kam kan kar kas kat kau kaw kaz kbd kha khi khm kho kik kin kir kmb kok kom kon kor kos kpe krc kro kru kua kum kur kut lad lah lam lao lat lav lez lim lin lit lol loz ltz lua lub lug lui lun luo lus mac mad mag mah mai mak mal man mao map mar mas may mdf mdr men mga mic min mis mkd mkh mlg mlt mnc mni mno moh mol mon mos mri msa mul mun mus mwl mwr mya myn myv nah nai nap nau nav nbl nde ndo nds nep new nia nic niu nld nno nob nog non nor nso nub nwc nya nym nyn nyo nzi oci oji ori orm osa oss ota oto paa pag pal pam pan pap pau peo per phi phn pli pol pon por pra pro pus que raj rap rar roa roh rom ron rum run rus sad sag sah sai sal sam san sas sat scc scn sco scr sel sem sga sgn shn sid sin sio sit sla slk slo slv sma sme smi smj smn smo sms sna snd snk sog som son sot spa sqi srd srp srr ssa ssw suk sun sus sux swa swe syr tah tai tam tat tel tem ter tet tgk tgl tha tib tig tir tiv tkl tlh tli tmh tog ton tpi tsi tsn tso tuk tum tup tur tut tvl twi tyv udm uga uig ukr umb und urd uzb vai ven vie vol vot wak wal war was wel wen wln wol xal xho yao yap yid yor ypk zap zen zha zho znd zul zun");
  var iso3166 = words("ad ae af ag ai al am an ao aq ar as at au aw az ba bb bd be bf bg bh bi bj bm bn bo br bs bt bv bw by bz ca cc cd cf cg ch ci ck cl cm cn co cr cu cv cx cy cz de dj dk dm do dz ec ee eg eh er es et fi fj fk fm fo fr fx ga gb gd ge gf gh gi gl gm gn gp gq gr gs gt gu gw gy hk hm hn hr ht hu id ie il in io iq ir is it jm jo jp ke kg kh ki km kn kp kr kw ky kz la lb lc li lk lr ls lt lu lv ly ma mc md mg mh mk ml mm mn mo mp mq mr ms mt mu mv mw mx my mz na nc ne nf ng ni nl no np nr nu nz om pa pe pf pg ph pk pl pm pn pr ps pt pw py qa re ro ru rw sa sb sc sd se sg sh si sj sk sl sm sn so sr st sv sy sz tc td tf tg th tj tk tl tm tn to tr tt tv tw tz ua ug um us uy uz va vc ve vg vi vn vu wf ws ye yt yu za zm zw");
  var ianaTags = words("art-lojban az-arab az-cyrl az-latn cel-gaulish de-1901 de-1996 de-at-1901 de-at-1996 de-ch-1901 de-ch-1996 de-de-1901 de-de-1996 en-boont en-ge-oed en-scouse i-ami i-bnn i-default i-enochian i-hak i-klingon i-lux i-mingo i-navajo i-pwn i-tao i-tay i-tsu no-bok no-nyn sgn-be-fr sgn-be-nl sgn-br sgn-ch-de sgn-co sgn-de sgn-dk sgn-es sgn-fr sgn-gb sgn-gr sgn-ie sgn-it sgn-jp sgn-mx sgn-nl sgn-no sgn-pt sgn-se sgn-us sgn-za sl-rozaj sr-cyrl sr-latn uz-cyrl uz-latn yi-latn zh-hans zh-hant zh-gan zh-guoyu zh-hakka zh-min zh-min-nan zh-wuu zh-xiang");
  function lang(v) {
    var tags = v.toLowerCase().split("-");
    if (!tags.every(function (t) { return /^[a-z0-9]{1,8}$/.test(t); })) return false;
    // A registered tag, or one that extends a registered one (zh-min-nan, de-at-1901).
    if (ianaTags[tags.join("-")] || (tags.length > 2 && ianaTags[tags.slice(0, 2).join("-")])) return true;
    var p = tags[0];
    if (p === "x") return tags.length > 1;
    if (!(p.length === 2 ? iso639a2[p] : p.length === 3 && (iso639a3[p] || /^q[a-t][a-z]$/.test(p)))) return false;
    // Past the primary subtag, only a country is not registered (RFC 3066 2.2).
    return tags.length === 1 || (tags[1].length === 2 && !!iso3166[tags[1]]);
  }
  function bool(v) { return v === "true" || v === "false"; }
  function number(v) { return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(v.trim()); }
  // A range "min[:]max" of numbers, either one may be left out, min no more than max.
  function range(v) {
    var p = v.split("[:]");
    if (p.length !== 2) return false;
    if ((p[0].trim() && !number(p[0])) || (p[1].trim() && !number(p[1]))) return false;
    return !(p[0].trim() && p[1].trim() && +p[0] > +p[1]);
  }
  // delimited takes the leading delimiters ({name=value}) the element allows, each once and
  // valid (a bad one: null); what follows, the first other delimiter included, is the value.
  function delimited(v, allowed) {
    var i = 0, seen = {};
    for (;;) {
      if (v.charAt(i) !== "{") break;
      var end = v.indexOf("}", i), eq = v.indexOf("=", i);
      if (end < 0 || eq < 0 || eq > end) break;
      var name = v.slice(i + 1, eq), val = v.slice(eq + 1, end);
      if (!allowed[name] || seen[name]) break;
      if (!allowed[name](val)) return null;
      seen[name] = true;
      i = end + 1;
    }
    return v.slice(i);
  }
  function listOf(v) { return v.split(comma); }
  function trailingComma(v) { var t = v.trim(); return t.length >= 3 && t.lastIndexOf(comma) === t.length - 3; }
  // pair checks "a[.]b": exactly one [.], each side as each() says.
  function pair(v, each) {
    var i = v.indexOf("[.]");
    if (i < 0 || v.indexOf("[.]", i + 3) >= 0) return false;
    return each(v.slice(0, i), v.slice(i + 3));
  }
  function response(type, pattern, v) {
    switch (type) {
    case "true-false": return bool(v);
    case "choice":
      if (v === "") return true;
      if (trailingComma(v)) return false;
      var seen = {};
      return listOf(v).every(function (c) {
        if (c.trim() === "" || !uri(c) || seen[c]) return false;
        seen[c] = true;
        return true;
      });
    case "fill-in":
      if (pattern) { v = delimited(v, { case_matters: bool, order_matters: bool }); if (v === null) return false; }
      return listOf(v).every(function (t) {
        if (t.indexOf("{lang=") !== 0 || t.indexOf("}") < 0) return true;
        return lang(t.slice(6, t.indexOf("}")));
      });
    case "long-fill-in":
      return delimited(v, pattern ? { case_matters: bool, lang: lang } : { lang: lang }) !== null;
    case "likert": return uri(v);
    case "matching":
      if (v.trim() === "") return !pattern;
      if (trailingComma(v)) return false;
      return listOf(v).every(function (p) {
        return pair(p, function (a, b) { return a !== "" && b !== "" && uri(a) && uri(b); });
      });
    case "performance":
      if (pattern) { v = delimited(v, { order_matters: bool }); if (v === null) return false; }
      if (trailingComma(v)) return false;
      return listOf(v).every(function (p) {
        return pair(p, function (name, answer) {
          if (name === "" && answer === "") return false;
          if (name !== "" && !uri(name)) return false;
          return answer.indexOf("[:]") < 0 || range(answer);
        });
      });
    case "sequencing":
      if (v === "" || trailingComma(v)) return false;
      return listOf(v).every(uri);
    case "numeric": return pattern ? range(v) : number(v);
    case "other": return true;
    }
    return true;
  }
  // placeholder is a response scorm-again takes for a type, to create a correct response
  // entry whose real pattern it would refuse.
  var placeholders = { "true-false": "true", choice: "lectern", "fill-in": "lectern", "long-fill-in": "lectern", likert: "lectern",
    matching: "a[.]b", performance: "a[.]b", sequencing: "lectern", numeric: "0[:]1", other: "lectern" };
  // cmiRaw reads an element past the API's checks, leaving its last error as it was.
  function cmiRaw(a, el) {
    var code = a.lastErrorCode, v;
    try { v = a.getCMIValue(el); } catch (e) { v = undefined; }
    a.lastErrorCode = code;
    return v;
  }
  function cmiCount(a, el) { var n = parseInt(cmiRaw(a, el + "._count"), 10); return isNaN(n) ? 0 : n; }
  // cmiStore sets an element's value behind scorm-again's setter, for the values the RTE
  // allows and its setter refuses; false when the element is not there.
  function cmiStore(a, el, v) {
    var o = a.cmi, p = el.split(".").slice(1);
    for (var i = 0; i < p.length - 1 && o; i++) o = /^\d+$/.test(p[i]) ? (o.childArray || [])[+p[i]] : o[p[i]];
    var f = "_" + p[p.length - 1];
    if (o && !(f in o) && o.content && f in o.content) o = o.content; // cmi.location, cmi.suspend_data
    if (!o || !(f in o)) return false;
    o[f] = v;
    if (a._setCMIElements) a._setCMIElements.add(el);
    return true;
  }
  var responseElement = /^cmi\.interactions\.(\d+)\.(learner_response|correct_responses\.(\d+)\.pattern)$/;
  // setResponse gives an interaction response or pattern the RTE allows and scorm-again's
  // own check refuses: a new correct response is created with a pattern scorm-again takes,
  // then given the real one. put is the API's setter (SetValue, or a load before
  // Initialize); false when the entry cannot be made.
  function setResponse(a, el, v, put) {
    var m = responseElement.exec(el);
    if (!m) return false;
    var type = cmiRaw(a, "cmi.interactions." + m[1] + ".type");
    if (m[3] !== undefined && +m[3] === cmiCount(a, "cmi.interactions." + m[1] + ".correct_responses")) {
      try { put(el, placeholders[type] || "lectern"); } catch (e) { return false; }
    }
    return cmiStore(a, el, v);
  }
  function conform2004(a) {
    function raw(el) { return cmiRaw(a, el); }
    function count(el) { return cmiCount(a, el); }
    function store(el, v) { return cmiStore(a, el, v); }
    function fail(code) { a.lastErrorCode = String(code); return code; }
    // where answers the RTE's error for el's collection index: 301 (GetValue) or 351
    // (SetValue) for an index past the end, 408 for a new entry that does not start with its
    // id (RTE 4.1.7: an objective or interaction is created by its id); 0 when none applies.
    function where(el, setting) {
      var m = collections.exec(el);
      if (!m) return 0;
      var base = "cmi." + m[1];
      if (!canonicalIndex.test(m[2])) return setting ? 351 : 301;
      var n = +m[2], c = count(base);
      if (n > c || (n === c && !setting)) return setting ? 351 : 301;
      if (n === c && m[1] !== "comments_from_learner" && m[1] !== "comments_from_lms" && m[3] !== "id") return 408;
      var s = m[1] === "interactions" && nested.exec(m[3]);
      if (s && n < c) {
        if (!canonicalIndex.test(s[2])) return setting ? 351 : 301;
        var k = +s[2], kc = count(base + "." + n + "." + s[1]);
        if (k > kc || (k === kc && !setting)) return setting ? 351 : 301;
      }
      return 0;
    }
    function valid(el, v) {
      if (/^cmi\.(objectives\.\d+\.id|interactions\.\d+\.id|interactions\.\d+\.objectives\.\d+\.id)$/.test(el)) return identifier(v);
      if (/^cmi\.(comments_from_learner|interactions)\.\d+\.timestamp$/.test(el)) return time(v);
      if (/^cmi\.(session_time|interactions\.\d+\.latency)$/.test(el)) return duration(v);
      if (el === "cmi.learner_preference.language") return v === "" || lang(v);
      // A localized_string_type's {lang=...} names a language_type (RTE 4.1.1.7).
      var m = /^\{lang=([^}]*)\}/.exec(v);
      if (m && /^cmi\.(comments_from_learner\.\d+\.comment|objectives\.\d+\.description|interactions\.\d+\.description)$/.test(el)) return lang(m[1]);
      return true;
    }
    var get = a.GetValue, set = a.SetValue;
    a.GetValue = function (el) {
      if (typeof el === "string" && a.isInitialized()) {
        var code = where(el, false);
        if (code) { fail(code); return ""; }
      }
      return get.apply(a, arguments);
    };
    a.SetValue = function (el, v) {
      if (typeof el === "string" && a.isInitialized() && el.indexOf("cmi.") === 0) {
        var code = where(el, true);
        if (code) { fail(code); return "false"; }
        var s = String(v);
        if (!valid(el, s)) { fail(406); return "false"; }
        // RTE 4.2.15.1: an objective's id is unique among the SCO's objectives.
        var ob = /^cmi\.objectives\.(\d+)\.id$/.exec(el);
        if (ob) {
          for (var i = 0, c = count("cmi.objectives"); i < c; i++) {
            if (i !== +ob[1] && raw("cmi.objectives." + i + ".id") === s) { fail(351); return "false"; }
          }
        }
        if (s === "" && blankable.test(el) && store(el, "")) { a.lastErrorCode = "0"; return "true"; }
        // An interaction's id may change (ADL DMI); scorm-again keeps the first one (351).
        var iid = /^cmi\.interactions\.(\d+)\.id$/.exec(el);
        if (iid && +iid[1] < count("cmi.interactions") && store(el, s)) { a.lastErrorCode = "0"; return "true"; }
        var ir = /^cmi\.interactions\.(\d+)\.(learner_response|correct_responses\.(\d+)\.pattern)$/.exec(el);
        var type = ir ? raw("cmi.interactions." + ir[1] + ".type") : "";
        if (ir && type) { // without a type scorm-again answers 408
          var pattern = ir[3] !== undefined;
          // RTE 4.2.9.1: these types have a single correct response.
          if (pattern && +ir[3] > 0 && /^(true-false|likert|numeric|other)$/.test(type)) { fail(351); return "false"; }
          if (!response(type, pattern, s)) { fail(406); return "false"; }
          var ok = set.call(a, el, s);
          if (ok === "true" || String(a.lastErrorCode) !== "406") return ok; // a duplicate, a full collection: 351
          if (setResponse(a, el, s, function (e, v) { if (set.call(a, e, v) !== "true") throw new Error("refused"); })) { a.lastErrorCode = "0"; return "true"; }
          fail(406);
          return "false";
        }
        // RTE 4.2.19: delivery_speed is a real >= 0; scorm-again refuses 0.
        if (el === "cmi.learner_preference.delivery_speed" && /^\d+(\.\d+)?$/.test(s) && +s === 0 && store(el, s)) { a.lastErrorCode = "0"; return "true"; }
      }
      return set.apply(a, arguments);
    };
  }
  // sharedData gives the SCO its shared data (adl.data, SCORM 2004 4th edition): the
  // activity's maps, whose read and write permissions scorm-again enforces (405, 404), and
  // the stores the server holds for it. A store that holds nothing answers "" with 403, also
  // one the SCO set to "" (the server keeps no empty store: ADL DDM).
  function sharedData(a, state) {
    a.lecternWritten = {};
    if (!a.adl || typeof a.adl.configureSharedDataMaps !== "function") return;
    a.adl.restoreSharedDataSnapshot(state.sharedData || {});
    a.adl.configureSharedDataMaps(state.sharedDataMaps || []);
    var storeEl = /^adl\.data\.(\d+)\.store$/, get = a.GetValue, set = a.SetValue;
    // past reports an adl.data index past the activity's maps (or not an index), which the
    // RTE answers 301 (GetValue) or 351 (SetValue) for (ADL DMI: adl.data.10 of 8 maps);
    // scorm-again answers 403 or stores it.
    var dataEl = /^adl\.data\.([^.]+)\.(id|store)$/;
    function past(el) {
      var m = typeof el === "string" && a.isInitialized() && dataEl.exec(el);
      if (!m) return false;
      var kids = (a.adl && a.adl.data && a.adl.data.childArray) || [];
      return !/^(0|[1-9]\d*)$/.test(m[1]) || +m[1] >= kids.length;
    }
    a.GetValue = function (el) {
      if (past(el)) { a.lastErrorCode = "301"; return ""; }
      var v = get.apply(a, arguments);
      if (typeof el === "string" && storeEl.test(el) && v === "" && String(a.lastErrorCode) === "0") a.lastErrorCode = "403";
      return v;
    };
    a.SetValue = function (el) {
      if (past(el)) { a.lastErrorCode = "351"; return "false"; }
      var ok = set.apply(a, arguments), m = typeof el === "string" && storeEl.exec(el);
      if (m && String(ok) === "true") a.lecternWritten[m[1]] = true;
      return ok;
    };
  }
  // sharedWrites makes a commit carry the stores the SCO wrote in this session (adl.data.n.id
  // and .store), and no other: scorm-again's commit carries every mapped store, and sending
  // back one the SCO only read would undo what another course wrote meanwhile.
  function sharedWrites(a, params) {
    Object.keys(params).forEach(function (k) { if (k.indexOf("adl.data.") === 0) delete params[k]; });
    var kids = (a.adl && a.adl.data && a.adl.data.childArray) || [];
    Object.keys(a.lecternWritten || {}).forEach(function (n) {
      var d = kids[n];
      if (!d) return;
      params["adl.data." + n + ".id"] = d.id;
      params["adl.data." + n + ".store"] = d.storeValue;
    });
    return params;
  }
  function navValid(name) {
    var v = seq.valid || {}, m = /^(choice|jump)\.\{target=(.+)\}$/.exec(name);
    if (m) return (v[m[1]] || {})[m[2]] ? "true" : "false";
    if (name === "continue" || name === "previous") return v[name] ? "true" : "false";
    return null;
  }

  // --- Prerequisites (SCORM 1.2, AICC): locked activities are disabled and skipped ---
  // step is the next activity from index from in direction dir that is not locked, or -1.
  function step(from, dir) {
    for (var j = from + dir; j >= 0 && j < scos.length; j += dir) if (!locked[scos[j].id]) return j;
    return -1;
  }
  function applyLocks() {
    if (seq) { drawNav(); return; }
    Object.keys(buttons).forEach(function (id) {
      buttons[id].disabled = !!locked[id];
      if (locked[id]) buttons[id].title = "Locked until its prerequisites are met"; else buttons[id].removeAttribute("title");
    });
    if ($("prev")) $("prev").disabled = step(current, -1) < 0;
    if ($("next")) $("next").disabled = step(current, 1) < 0;
  }
  function refreshLocks() {
    if (!cfg.prerequisites) return;
    var req = new XMLHttpRequest();
    req.open("GET", cfg.runtimeUrl + "/locked");
    req.onload = function () {
      if (req.status !== 200) return;
      try { locked = JSON.parse(req.responseText).locked || {}; } catch (e) { return; }
      applyLocks();
    };
    req.send();
  }
  if (cfg.prerequisites) setInterval(refreshLocks, (cfg.commitSeconds || 10) * 1000);

  // Run-time settings the page applies to the SCORM API (PlayerSuspendDataMaxLength,
  // PlayerCommMaxFailedSubmissions, PlayerFinishCausesImmediateCommit). They hook
  // scorm-again's storeData, which LMSCommit/Commit, the automatic commits and
  // LMSFinish/Terminate all go through, and the API's SetValue.
  var failedCommits = 0, pendingFinish = [];
  function runtimeSettings(api) {
    var v2004 = cfg.dialect === "2004";
    limitSuspendData(api, v2004 ? "SetValue" : "LMSSetValue", v2004 ? 407 : 405);
    var store = api.storeData;
    api.storeData = function (terminate) {
      if (terminate && cfg.finishCommit === false && !seq) {
        // Held until the next scheduled commit, another activity, or the page going away.
        pendingFinish.push(function () { countCommit(store.call(api, true, "terminate")); });
        setTimeout(flushFinish, (cfg.commitSeconds || 10) * 1000);
        return { result: "true", errorCode: 0 };
      }
      var r = store.apply(api, arguments);
      countCommit(r);
      return r;
    };
  }
  function flushFinish() {
    var p = pendingFinish;
    pendingFinish = [];
    p.forEach(function (f) { f(); });
  }
  window.addEventListener("pagehide", flushFinish);
  // A commit the server refused (or that never reached it) counts; after
  // cfg.maxFailedSubmissions in a row the learner is told, until a commit succeeds.
  function countCommit(r) {
    var ok = r && String(r.result) === "true" && !(r.errorCode > 0);
    failedCommits = ok ? 0 : failedCommits + 1;
    document.getElementById("unsaved").hidden = failedCommits < (cfg.maxFailedSubmissions || 2);
  }
  // SetValue refuses suspend data longer than the setting allows with the dialect's code, so
  // the content learns it at once and its commits stay valid.
  function limitSuspendData(api, setter, code) {
    var set = api[setter];
    api[setter] = function (element, value) {
      if (element === "cmi.suspend_data" && cfg.suspendDataMax > 0 && Array.from(String(value)).length > cfg.suspendDataMax) {
        api.throwSCORMError(element, code, "suspend_data is longer than " + cfg.suspendDataMax + " characters");
        return "false";
      }
      return set.apply(api, arguments);
    };
  }
  // finishedText is the page's closing message; showMessage() without a text shows it, not
  // whatever message the page showed last.
  var finishedText = $("done").textContent;
  function showMessage(text) {
    frame.hidden = true;
    $("launch-panel").hidden = true;
    var d = $("done"); d.hidden = false;
    d.textContent = text || finishedText;
  }
  // follow goes where a redirect setting says: closer, blank, message or a URL.
  function follow(r) {
    leaving = true;
    if (r === "closer") { window.close(); showMessage(); }
    else if (r === "blank") { location.replace("about:blank"); }
    else if (r === "message") { showMessage(); }
    else { location.assign(r); }
  }
  function exit() {
    sessionLeave();
    leaving = true;
    try { sessionStorage.setItem(exitKey, "1"); } catch (e) {}
    unload();
    var r = cfg.redirect || "message";
    if (chrome.redirectLaunchPage && toOpener(r)) { showMessage(); window.close(); return; }
    follow(r);
  }
  // toOpener sends the page that opened the player's window (the player's launch page, or an
  // LMS page on another origin) to the exit target; false when there is none to send.
  function toOpener(r) {
    var o = window.opener;
    if (!o || o.closed) return false;
    try { if (typeof o.lecternExit === "function") { o.lecternExit(r); return true; } } catch (e) {}
    if (!/^https?:/.test(r)) return false;
    try { o.location.href = r; return true; } catch (e) { return false; }
  }

  // --- Activity windows (PlayerScoLaunchType) ---
  var scoWin = null, watcher = 0;
  function windowed() { return chrome.scoLaunch && chrome.scoLaunch !== "FRAMESET"; }
  function features() {
    return /WITHOUT_BROWSER_TOOLBAR/.test(chrome.scoLaunch) ? "popup=yes,toolbar=no,location=no,menubar=no,status=no,resizable=yes,scrollbars=yes,width=1024,height=768" : "";
  }
  // unload ends the running activity: its page unloads, so it finishes (LMSFinish /
  // Terminate) and commits through sendBeacon.
  function unload() {
    frame.src = "about:blank";
    if (scoWin && !scoWin.closed) scoWin.close();
    scoWin = null;
  }
  function show(url) {
    if (!windowed()) { $("launch-panel").hidden = true; $("done").hidden = true; frame.hidden = false; frame.src = url; return; }
    frame.hidden = true;
    if (/AFTER_CLICK/.test(chrome.scoLaunch)) { panel(url, "Click Launch to open the activity in a new window."); return; }
    openWindow(url);
  }
  function ownWindow(url) {
    if (window.top !== window.self) { window.open(url); return; }
    leaving = true;
    location.assign(url);
  }
  function panel(url, text) {
    $("done").hidden = true;
    $("launch-panel").hidden = false;
    $("launch-text").textContent = text;
    $("launch").onclick = function () { openWindow(url); };
  }
  function openWindow(url) {
    if (scoWin && !scoWin.closed) scoWin.close();
    scoWin = window.open(url, "lectern-activity", features());
    if (!scoWin) { panel(url, "Your browser blocked the activity's window. Click Launch to open it."); return; }
    panel(url, "The activity is open in its own window. Click Launch to open it again.");
    var w = scoWin;
    clearInterval(watcher);
    watcher = setInterval(function () { if (w.closed) { clearInterval(watcher); if (scoWin === w) scoWin = null; } }, 500);
  }

  // --- Progress bar (PlayerShowProgressBar) ---
  var done = {};
  (chrome.completed || []).forEach(function (id) { done[id] = true; });
  function progressed(id) {
    done[id] = true;
    if (!$("progress")) return;
    var n = scos.filter(function (a) { return done[a.id]; }).length, total = chrome.total || scos.length;
    $("progress").setAttribute("aria-valuenow", n);
    $("progress-fill").style.width = (total ? 100 * n / total : 0) + "%";
    $("progress-text").textContent = n + " of " + total + " completed";
  }
  progressed("");

  // --- Controls ---
  if ($("prev")) $("prev").onclick = function () { if (seq) navigate("previous"); else go(step(current, -1)); };
  if ($("next")) $("next").onclick = function () { if (seq) navigate("continue"); else go(step(current, 1)); };
  if ($("close")) $("close").onclick = function () {
    unload();
    frame.hidden = true;
    var a = scos[current];
    if (a) panel(a.url, "You closed \u201c" + (a.title || a.id) + "\u201d. Click Launch to open it again" + (toc ? ", or choose another activity." : "."));
    $("launch").onclick = function () { go(current); };
  };
  if ($("help-button")) $("help-button").onclick = function () {
    var h = $("help"); h.hidden = !h.hidden;
    this.setAttribute("aria-expanded", String(!h.hidden));
  };
  // leave ends a sequenced course's session as the learner asks (SN book: exitAll ends the
  // attempt on the course, suspendAll keeps the place): the running SCO terminates first, its
  // own pending request giving way to the learner's. Exit of a running SCO that set cmi.exit
  // to "suspend" suspends: the content asked to come back where the learner left it, and
  // ending the attempt would lose that place (RTE 4.2.8). A SCO that already terminated
  // itself ended its session as it wished; the learner's Exit then ends the attempt on the
  // course, as ADL's LMS does (ADL DDM: the next launch starts the course again).
  function leave(request) {
    if (navBusy) return;
    navBusy = true;
    exiting = true;
    var a = api;
    var suspends = !!(a && a.isInitialized() && a.lecternExitValue === "suspend");
    suspending = request === "suspendAll";
    endSco(function () {
      var r = request || (suspends ? "suspendAll" : "exitAll");
      var req = new XMLHttpRequest();
      req.open("POST", cfg.runtimeUrl + "/navigate?request=" + r);
      req.onloadend = function () { navBusy = false; exit(); };
      req.send();
    });
  }
  if ($("suspend")) $("suspend").onclick = function () { leave("suspendAll"); };
  if ($("exit")) $("exit").onclick = function () {
    if (seq) { leave(""); return; }
    exiting = true;
    // Unloading the content makes it finish its session (LMSFinish / Terminate), which
    // commits through sendBeacon; content that never finishes still exits.
    unload();
    setTimeout(exit, 1500);
  };
  // The player session (docs/decisions.md, "Player sessions"): while the page is visible it
  // beats at the commit interval, so the server measures the time in the content; hiding and
  // leaving the page are sent as beacons. A refused post (its reason) means the course was
  // opened in another window, or the session expired: warn, or exit when the server says so.
  var beatTimer = null, sessionOver = false;
  function heartbeatURL(state) {
    var a = scos[current];
    return cfg.runtimeUrl + "/heartbeat?activity=" + encodeURIComponent(a ? a.id : "") + (state ? "&state=" + state : "");
  }
  function heartbeat() {
    if (cfg.preview || sessionOver || current < 0 || document.visibilityState === "hidden") return;
    var req = new XMLHttpRequest();
    req.open("POST", heartbeatURL(""));
    req.onload = function () { try { sessionNotice(JSON.parse(req.responseText)); } catch (e) {} };
    req.send();
  }
  function beacon(state) {
    if (cfg.preview || sessionOver || current < 0 || !navigator.sendBeacon) return;
    navigator.sendBeacon(heartbeatURL(state), "");
  }
  function sessionLeave() {
    beacon("exit");
    sessionOver = true;
    clearInterval(beatTimer);
  }
  function sessionNotice(r) {
    if (!r || !r.reason || sessionOver) return;
    sessionOver = true;
    clearInterval(beatTimer);
    var text = r.message ? r.message.charAt(0).toUpperCase() + r.message.slice(1) : "";
    if (r.reason === "concurrent-launch-exit") {
      unload();
      showMessage(text);
      return;
    }
    var w = document.getElementById("warning");
    w.textContent = text;
    w.hidden = false;
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") beacon("hidden"); else heartbeat();
  });
  window.addEventListener("pagehide", function () { pageGoing = true; beacon("exit"); });
  window.addEventListener("beforeunload", function () { pageGoing = true; });
  if (!cfg.preview) beatTimer = setInterval(heartbeat, (cfg.commitSeconds || 10) * 1000);
  if (chrome.promptOnClose) window.addEventListener("beforeunload", function (e) {
    if (leaving) return;
    e.preventDefault();
    e.returnValue = "";
  });

  var refreshed = false;
  try { refreshed = !!sessionStorage.getItem(exitKey); } catch (e) {}
  if (refreshed && chrome.redirectOnRefresh) { follow(chrome.redirectOnRefresh); return; }
  if (seq) {
    drawNav();
    if (seq.deliver) go(scoIndex(seq.deliver));
    else if (seq.sessionEnded) exit();
    else showMessage(seq.message ? "Nothing can be launched now: " + seq.message : "This course has nothing to launch.");
    return;
  }
  var start = 0;
  scos.forEach(function (a, i) { if (a.id === cfg.start) start = i; });
  if (scos.length > 0 && locked[scos[start].id]) start = step(-1, 1);
  if (scos.length === 0) showMessage("This course has nothing to launch.");
  else if (start < 0) { applyLocks(); showMessage("Every activity of this course is locked until its prerequisites are met."); }
  else if (cfg.returned && scos.length < 2) exit();
  else if (cfg.returned) {
    // Back from an OwnWindow AU: the learner chooses what comes next.
    scos.forEach(function (a, i) { if (a.id === cfg.returned) current = i; });
    Object.keys(buttons).forEach(function (id) { buttons[id].className = id === cfg.returned ? "current" : ""; });
    showMessage("You are back from the unit. Choose another one, or exit.");
  }
  else go(start);
})();
</script>
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
		JSON template.JS
		Bar  bool
		Done int
	}{cfg, template.JS(js), cfg.Chrome.bar(cfg.Preview), done})
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
