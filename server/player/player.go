// Package player holds the course player's browser side: the HTML page that hosts SCORM
// content in an iframe with scorm-again as its SCORM API, and the runtime script, built into
// assets/ at build time (scripts/player-assets.sh) and embedded in the binary.
package player

import (
	"bytes"
	"embed"
	"encoding/json"
	"html/template"
)

//go:embed assets
var assets embed.FS

// RuntimeScript returns the scorm-again bundle; ok is false when the binary was built without
// running scripts/player-assets.sh.
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
}

var pageTmpl = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
html,body{margin:0;height:100%;font-family:system-ui,sans-serif}
#bar{display:flex;gap:.5em;align-items:center;padding:.3em .6em;background:#24324a;color:#fff;height:2.2em;box-sizing:border-box}
#bar h1{font-size:1em;margin:0;flex:1;overflow:hidden;white-space:nowrap;text-overflow:ellipsis}
#main{display:flex;height:calc(100% - 2.2em)}
#toc{width:16em;overflow:auto;border-right:1px solid #ccc;padding:.5em;box-sizing:border-box}
#toc button{display:block;width:100%;text-align:left;border:0;background:none;padding:.25em;cursor:pointer}
#toc button.current{background:#dde6f5;font-weight:bold}
#toc div.container{padding:.25em;color:#555}
#frame{flex:1;border:0;height:100%}
#done{flex:1;padding:2em}
#warning{padding:.5em .8em;background:#fff3cd;color:#5c4400;border-bottom:1px solid #e0c36a}
.single #toc,.single #prev,.single #next{display:none}
#unsaved{position:fixed;left:0;right:0;bottom:0;margin:0;padding:.6em 1em;background:#a4161a;color:#fff;z-index:10}
</style></head>
<body>
<div id="bar"><h1>{{.Title}}{{if .Preview}} (preview: nothing is recorded){{end}}</h1>
<button id="prev" type="button">Previous</button><button id="next" type="button">Next</button><button id="exit" type="button">Exit</button></div>
<div id="warning" role="alert" hidden></div>
<div id="main"><nav id="toc" aria-label="Contents"></nav><iframe id="frame" title="Course content"></iframe><div id="done" hidden>You have finished this course. You can close this window.</div></div>
<p id="unsaved" role="alert" hidden>Your progress is not being saved: the server does not accept it. Keep this window open and check your connection, or launch the course again.</p>
<script id="cfg" type="application/json">{{.JSON}}</script>
<script src="{{.ScriptURL}}"></script>
<script>
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("cfg").textContent);
  var frame = document.getElementById("frame"), toc = document.getElementById("toc");
  var scos = cfg.activities.filter(function (a) { return a.url; });
  if (scos.length < 2) document.body.className = "single";
  var current = -1, api = null, exiting = false;
  var buttons = {};
  cfg.activities.forEach(function (a) {
    var el;
    if (a.url) {
      el = document.createElement("button"); el.type = "button";
      el.onclick = function () { go(scos.indexOf(a)); };
      buttons[a.id] = el;
    } else {
      el = document.createElement("div"); el.className = "container";
    }
    el.textContent = a.title || a.id;
    el.style.paddingLeft = (a.depth * 0.8 + 0.25) + "em";
    toc.appendChild(el);
  });
  function responseHandler(xhr) {
    try { var r = JSON.parse(xhr.responseText); if (r && r.reason) sessionNotice(r); if (r && "result" in r) return { result: r.result, errorCode: r.errorCode || 0 }; } catch (e) {}
    return xhr.status >= 200 && xhr.status < 300 ? { result: "true", errorCode: 0 } : { result: "false", errorCode: 101 };
  }
  // A single-SCO course exits when its SCO finishes; in a multi-SCO course the learner goes
  // on with the table of contents or Previous/Next, or leaves with Exit.
  function finished() {
    if (exiting || scos.length < 2) setTimeout(exit, 0);
  }
  function go(i) {
    if (i < 0 || i >= scos.length) return;
    if (current >= 0) heartbeat(); // the time so far belongs to the activity being left
    var a = scos[i];
    current = i;
    Object.keys(buttons).forEach(function (id) { buttons[id].className = id === a.id ? "current" : ""; });
    document.getElementById("prev").disabled = i === 0;
    document.getElementById("next").disabled = i === scos.length - 1;
    frame.src = "about:blank";
    // AICC AUs talk HACP to the server themselves (aicc_sid and aicc_url are in their URL).
    // xAPI activities get the record store's endpoint and credential in theirs.
    if (cfg.dialect === "aicc" || cfg.dialect === "xapi" || cfg.dialect === "cmi5") { frame.src = a.url; return; }
    var req = new XMLHttpRequest();
    req.open("GET", cfg.runtimeUrl + "/activity?activity=" + encodeURIComponent(a.id));
    req.onload = function () {
      if (req.status !== 200) { showMessage("This activity cannot be launched: " + req.responseText); return; }
      var state = JSON.parse(req.responseText);
      var settings = {
        lmsCommitUrl: cfg.runtimeUrl + "/commit?activity=" + encodeURIComponent(a.id) + "&attempt=" + state.attempt,
        dataCommitFormat: "flattened", includeCommitSequence: true, sendFullCommit: true, terminateCommitParam: "terminate",
        autocommit: true, autocommitSeconds: cfg.commitSeconds || 10, alwaysSendTotalTime: true,
        xhrResponseHandler: responseHandler, logLevel: 4
      };
      flushFinish();
      if (cfg.dialect === "2004") {
        api = window.API_1484_11 = new window.Scorm2004API(settings);
        api.on("Terminate", finished);
      } else {
        api = window.API = new window.Scorm12API(settings);
        api.on("LMSFinish", finished);
      }
      runtimeSettings(api);
      api.loadFromFlattenedJSON(state.cmi, "");
      frame.src = a.url;
    };
    req.send();
  }
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
      if (terminate && cfg.finishCommit === false) {
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
  function showMessage(text) {
    frame.hidden = true;
    var d = document.getElementById("done"); d.hidden = false;
    if (text) d.textContent = text;
  }
  function exit() {
    sessionLeave();
    var r = cfg.redirect || "message";
    if (r === "closer") { window.close(); showMessage(); }
    else if (r === "blank") { location.replace("about:blank"); }
    else if (r === "message") { showMessage(); }
    else { location.assign(r); }
  }
  document.getElementById("prev").onclick = function () { go(current - 1); };
  document.getElementById("next").onclick = function () { go(current + 1); };
  document.getElementById("exit").onclick = function () {
    exiting = true;
    // Unloading the content makes it finish its session (LMSFinish / Terminate), which
    // commits through sendBeacon; content that never finishes still exits.
    frame.src = "about:blank";
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
      frame.src = "about:blank";
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
  window.addEventListener("pagehide", function () { beacon("exit"); });
  if (!cfg.preview) beatTimer = setInterval(heartbeat, (cfg.commitSeconds || 10) * 1000);
  var start = 0;
  scos.forEach(function (a, i) { if (a.id === cfg.start) start = i; });
  if (scos.length === 0) showMessage("This course has nothing to launch.");
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
	err = pageTmpl.Execute(&buf, struct {
		Config
		JSON template.JS
	}{cfg, template.JS(js)})
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
