// The SCORM 2004 API's set-up over scorm-again 3.4.3, where its answers differ from the RTE
// book's: loading the stored data, the RTE's checks in front of its GetValue and SetValue
// (values.js), and adl.data shared data. Each function takes the API object; none touches
// the page, whose navigation (page.js) needs none of this.
var scorm2004API = (function (values) {
  "use strict";
  // loadState gives the API the activity's stored data. scorm-again 3.4.3 loads the elements
  // outside cmi.interactions and cmi.objectives in the order of their names as text, and an
  // interaction's entries by field name as text: comments_from_learner.10 came before .2 and
  // was refused (its index past the end), so only ten comments came back (ADL DMI). The
  // collections' elements are loaded first, one at a time, by index as a number, an entry's
  // id (and an interaction's type) before the rest; the others as scorm-again loads them.
  var indexed = /^cmi\.(interactions|comments_from_learner|comments_from_lms)\.\d+\./;
  var responseElement = /^cmi\.interactions\.(\d+)\.(learner_response|correct_responses\.(\d+)\.pattern)$/;
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
  // setResponse gives an interaction response or pattern the RTE allows and scorm-again's
  // own check refuses: a new correct response is created with a pattern scorm-again takes,
  // then given the real one. put is the API's setter (SetValue, or a load before
  // Initialize); false when the entry cannot be made.
  function setResponse(a, el, v, put) {
    var m = responseElement.exec(el);
    if (!m) return false;
    var type = cmiRaw(a, "cmi.interactions." + m[1] + ".type");
    if (m[3] !== undefined && +m[3] === cmiCount(a, "cmi.interactions." + m[1] + ".correct_responses")) {
      try { put(el, values.placeholder(type)); } catch (e) { return false; }
    }
    return cmiStore(a, el, v);
  }
  // conform2004 puts the SCORM 2004 RTE's own checks in front of scorm-again 3.4.3 where it
  // answers otherwise (ADL DMI). What the SCO sets in error is not stored, so the commit
  // stays one the server accepts.
  function conform2004(a) {
    function raw(el) { return cmiRaw(a, el); }
    function count(el) { return cmiCount(a, el); }
    function store(el, v) { return cmiStore(a, el, v); }
    function fail(code) { a.lastErrorCode = String(code); return code; }
    var get = a.GetValue, set = a.SetValue;
    a.GetValue = function (el) {
      if (typeof el === "string" && a.isInitialized()) {
        var code = values.collectionError(el, false, count);
        if (code) { fail(code); return ""; }
      }
      return get.apply(a, arguments);
    };
    a.SetValue = function (el, v) {
      if (typeof el === "string" && a.isInitialized() && el.indexOf("cmi.") === 0) {
        var code = values.collectionError(el, true, count);
        if (code) { fail(code); return "false"; }
        var s = String(v);
        if (!values.element(el, s)) { fail(406); return "false"; }
        // RTE 4.2.15.1: an objective's id is unique among the SCO's objectives.
        var ob = /^cmi\.objectives\.(\d+)\.id$/.exec(el);
        if (ob) {
          for (var i = 0, c = count("cmi.objectives"); i < c; i++) {
            if (i !== +ob[1] && raw("cmi.objectives." + i + ".id") === s) { fail(351); return "false"; }
          }
        }
        if (s === "" && values.blankable(el) && store(el, "")) { a.lastErrorCode = "0"; return "true"; }
        // An interaction's id may change (ADL DMI); scorm-again keeps the first one (351).
        var iid = /^cmi\.interactions\.(\d+)\.id$/.exec(el);
        if (iid && +iid[1] < count("cmi.interactions") && store(el, s)) { a.lastErrorCode = "0"; return "true"; }
        var ir = /^cmi\.interactions\.(\d+)\.(learner_response|correct_responses\.(\d+)\.pattern)$/.exec(el);
        var type = ir ? raw("cmi.interactions." + ir[1] + ".type") : "";
        if (ir && type) { // without a type scorm-again answers 408
          var pattern = ir[3] !== undefined;
          if (pattern && +ir[3] > 0 && values.singleCorrectResponse(type)) { fail(351); return "false"; }
          if (!values.response(type, pattern, s)) { fail(406); return "false"; }
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
  return {
    loadState: loadState, leavesOnly: leavesOnly, conform2004: conform2004,
    sharedData: sharedData, sharedWrites: sharedWrites
  };
})(scorm2004Values);
