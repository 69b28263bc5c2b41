(function (rte) {
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
  var seq = cfg.dialect === "2004" && cfg.nav ? cfg.nav : null, navBusy = false, pageGoing = false, lastCommitNav = null, sentRequest = "", learnerRequest = "";
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
        if (api2004) params = rte.sharedWrites(api2004, params);
        return seq ? pendingRequest(params, meta) : params;
      };
      flushFinish();
      if (cfg.dialect === "2004") {
        api = api2004 = window.API_1484_11 = new window.Scorm2004API(settings);
        rte.leavesOnly(api);
        rte.conform2004(api);
        rte.sharedData(api, state);
        api.on("Terminate", seq ? seqTerminated : finished);
        if (seq) sequenced(api);
        api.on("SetValue.cmi.completion_status", function (el, v) { if (v === "completed") progressed(a.id); });
      } else {
        api = window.API = new window.Scorm12API(settings);
        api.on("LMSFinish", finished);
        api.on("LMSSetValue.cmi.core.lesson_status", function (el, v) { if (v === "completed" || v === "passed") progressed(a.id); });
      }
      runtimeSettings(api);
      rte.loadState(api, state.cmi);
      show(a.url);
    };
    req.send();
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
  // The learner's Suspend or Exit (learnerRequest) is the request the terminating commit
  // carries: the server suspends the SCO's attempt on suspendAll (learner.suspendedByRequest,
  // the rule's one home) and the sequencer answers the commit.
  function pendingRequest(params, meta) {
    if (meta && meta.isTerminateCommit && learnerRequest) params["adl.nav.request"] = sentRequest = learnerRequest;
    else if (meta && meta.isTerminateCommit && !navBusy && !exiting && api && api.adl && api.adl.nav) {
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
    var r = learnerRequest = request || (suspends ? "suspendAll" : "exitAll");
    lastCommitNav = null; // only the terminating commit's answer counts
    endSco(function () {
      // The terminating commit carried the request and the sequencer answered it; a SCO that
      // had already terminated (or a commit that failed) leaves it to the navigate endpoint.
      var carried = sentRequest === r && lastCommitNav;
      learnerRequest = sentRequest = "";
      lastCommitNav = null;
      if (carried) { navBusy = false; exit(); return; }
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
})(scorm2004API);
