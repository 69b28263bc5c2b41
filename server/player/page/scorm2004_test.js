// Tests of scorm2004.js over the scorm-again bundle the page loads: each scenario makes a
// SCORM 2004 API as the page does (leavesOnly, conform2004), runs the SCO's calls and checks
// what each returns and the error code the RTE gives. Run by page_test.go as
// `node scorm2004_test.js <scorm-again.min.js>`; the exit status says whether any failed.
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

// The bundle and the page's files are browser scripts: one context plays the page's window.
function load(bundle) {
  const ctx = { console, setTimeout, clearTimeout, setInterval, clearInterval };
  ctx.window = ctx;
  ctx.self = ctx;
  vm.createContext(ctx);
  vm.runInContext(fs.readFileSync(bundle, "utf8"), ctx, { filename: bundle });
  for (const f of ["values.js", "scorm2004.js"]) {
    const file = path.join(__dirname, f);
    vm.runInContext(fs.readFileSync(file, "utf8"), ctx, { filename: file });
  }
  return ctx;
}
const ctx = load(process.argv[2]);
const rte = ctx.scorm2004API;

// newAPI is the page's SCORM 2004 API without a server: no commits.
function newAPI(stored) {
  const a = new ctx.Scorm2004API({ autocommit: false, logLevel: 5 });
  rte.leavesOnly(a);
  rte.conform2004(a);
  if (stored) rte.loadState(a, stored);
  a.Initialize("");
  return a;
}

// A step is [call, element, value (SetValue), want returned, want error code]; GET's
// returned value is checked unless want is undefined.
const scenarios = {
  // A container of elements is not an element (401); the API still works after.
  containers: [
    ["GET", "cmi", undefined, "", "401"],
    ["GET", "adl.nav", undefined, "", "401"],
    ["SET", "cmi.score", "1", "false", "401"],
    ["SET", "cmi.location", "here", "true", "0"],
    ["GET", "cmi.location", undefined, "here", "0"],
  ],
  // Entries are created by their id, in order; indexes past the end are 301 and 351.
  collections: [
    ["GET", "cmi.interactions.0.id", undefined, "", "301"],
    ["SET", "cmi.interactions.0.type", "choice", "false", "408"],
    ["SET", "cmi.interactions.1.id", "q2", "false", "351"],
    ["SET", "cmi.interactions.0.id", "q1", "true", "0"],
    ["GET", "cmi.interactions.0.id", undefined, "q1", "0"],
    ["SET", "cmi.interactions.01.id", "q1", "false", "351"],
    ["GET", "cmi.interactions.0.correct_responses.0.pattern", undefined, "", "301"],
    ["GET", "cmi.interactions.0.objectives.0.id", undefined, "", "301"],
    ["SET", "cmi.interactions.0.objectives.1.id", "o1", "false", "351"],
    ["GET", "cmi.comments_from_learner.0.comment", undefined, "", "301"],
    ["SET", "cmi.comments_from_learner.0.comment", "hello", "true", "0"],
    ["SET", "cmi.objectives.0.score.raw", "1", "false", "408"],
  ],
  // An objective's id is unique; an interaction's id may change.
  ids: [
    ["SET", "cmi.objectives.0.id", "o1", "true", "0"],
    ["SET", "cmi.objectives.1.id", "o1", "false", "351"],
    ["SET", "cmi.objectives.1.id", "o2", "true", "0"],
    ["SET", "cmi.objectives.1.id", "o1", "false", "351"],
    ["SET", "cmi.interactions.0.id", "q1", "true", "0"],
    ["SET", "cmi.interactions.0.id", "q2", "true", "0"],
    ["GET", "cmi.interactions.0.id", undefined, "q2", "0"],
    ["SET", "cmi.interactions.1.id", "urn:x", "false", "406"],
  ],
  // An empty characterstring is a value.
  blanks: [
    ["SET", "cmi.location", "", "true", "0"],
    ["GET", "cmi.location", undefined, "", "0"],
    ["SET", "cmi.suspend_data", "", "true", "0"],
    ["SET", "cmi.learner_preference.language", "", "true", "0"],
    ["SET", "cmi.objectives.0.id", "o1", "true", "0"],
    ["SET", "cmi.objectives.0.description", "", "true", "0"],
  ],
  languages: [
    ["SET", "cmi.learner_preference.language", "en-US", "true", "0"],
    ["SET", "cmi.learner_preference.language", "frl", "false", "406"],
    ["GET", "cmi.learner_preference.language", undefined, "en-US", "0"],
    ["SET", "cmi.comments_from_learner.0.comment", "{lang=sp}hola", "false", "406"],
    ["SET", "cmi.comments_from_learner.0.comment", "{lang=es}hola", "true", "0"],
  ],
  times: [
    ["SET", "cmi.session_time", "PT1H30M", "true", "0"],
    ["SET", "cmi.session_time", "PT", "false", "406"],
    ["SET", "cmi.comments_from_learner.0.comment", "c", "true", "0"],
    ["SET", "cmi.comments_from_learner.0.timestamp", "2004-04-01T09:45:58.55+02:30", "true", "0"],
    ["SET", "cmi.comments_from_learner.0.timestamp", "2004-04-01T09:45:58Z", "false", "406"],
    ["SET", "cmi.comments_from_learner.0.timestamp", "1969-12-31", "false", "406"],
  ],
  // RTE 4.2.9.1 responses, including those scorm-again 3.4.3 refuses itself and the page
  // stores behind it.
  responses: [
    ["SET", "cmi.interactions.0.id", "q1", "true", "0"],
    ["SET", "cmi.interactions.0.type", "fill-in", "true", "0"],
    ["SET", "cmi.interactions.0.correct_responses.0.pattern", "{case_matters=true}{order_matters=false}a[,]b", "true", "0"],
    ["GET", "cmi.interactions.0.correct_responses.0.pattern", undefined, "{case_matters=true}{order_matters=false}a[,]b", "0"],
    ["SET", "cmi.interactions.0.correct_responses.1.pattern", "{case_matters=maybe}a", "false", "406"],
    ["GET", "cmi.interactions.0.correct_responses._count", undefined, "1", "0"],
    ["SET", "cmi.interactions.0.learner_response", "{lang=en}a", "true", "0"],
    ["SET", "cmi.interactions.1.id", "q2", "true", "0"],
    ["SET", "cmi.interactions.1.type", "true-false", "true", "0"],
    ["SET", "cmi.interactions.1.correct_responses.0.pattern", "true", "true", "0"],
    ["SET", "cmi.interactions.1.correct_responses.1.pattern", "false", "false", "351"],
    ["SET", "cmi.interactions.1.learner_response", "yes", "false", "406"],
    ["SET", "cmi.interactions.2.id", "q3", "true", "0"],
    ["SET", "cmi.interactions.2.learner_response", "a", "false", "408"],
    ["SET", "cmi.interactions.2.type", "choice", "true", "0"],
    ["SET", "cmi.interactions.2.learner_response", "a[,]a", "false", "406"],
    ["SET", "cmi.interactions.2.learner_response", "a[,]b", "true", "0"],
    ["SET", "cmi.interactions.3.id", "q4", "true", "0"],
    ["SET", "cmi.interactions.3.type", "numeric", "true", "0"],
    ["SET", "cmi.interactions.3.correct_responses.0.pattern", "5[:]1", "false", "406"],
    ["SET", "cmi.interactions.3.correct_responses.0.pattern", "1[:]5", "true", "0"],
    ["SET", "cmi.interactions.3.learner_response", "2.5", "true", "0"],
  ],
  // RTE 4.2.19: delivery_speed is a real >= 0.
  speed: [
    ["SET", "cmi.learner_preference.delivery_speed", "0", "true", "0"],
    ["GET", "cmi.learner_preference.delivery_speed", undefined, "0", "0"],
    ["SET", "cmi.learner_preference.delivery_speed", "-1", "false", "407"],
  ],
};

const failed = [];
let n = 0;
function check(what, got, want) {
  n++;
  if (got !== want) failed.push(what + ": got " + JSON.stringify(got) + ", want " + JSON.stringify(want));
}
for (const name of Object.keys(scenarios)) {
  const a = newAPI();
  scenarios[name].forEach(([call, el, v, ret, code], i) => {
    const what = name + " " + i + " " + call + " " + el + (call === "SET" ? " = " + JSON.stringify(v) : "");
    const got = call === "SET" ? a.SetValue(el, v) : a.GetValue(el);
    check(what + " (returned)", String(got), ret);
    check(what + " (error code)", String(a.GetLastError()), code);
  });
}

// loadState: stored collections come back in index order as numbers, so the 11th comment
// (index 10) is not refused for coming before the 3rd; a stored pattern scorm-again refuses
// and the RTE allows comes back too.
{
  const stored = { "cmi.location": "p2" };
  for (let i = 0; i < 11; i++) stored["cmi.comments_from_learner." + i + ".comment"] = "c" + i;
  Object.assign(stored, {
    "cmi.interactions.0.type": "fill-in",
    "cmi.interactions.0.id": "q1",
    "cmi.interactions.0.correct_responses.0.pattern": "{case_matters=true}{order_matters=false}a[,]b",
  });
  const a = newAPI(stored);
  check("loadState comments", a.GetValue("cmi.comments_from_learner._count"), "11");
  check("loadState comment 10", a.GetValue("cmi.comments_from_learner.10.comment"), "c10");
  check("loadState interaction type", a.GetValue("cmi.interactions.0.type"), "fill-in");
  check("loadState pattern", a.GetValue("cmi.interactions.0.correct_responses.0.pattern"), "{case_matters=true}{order_matters=false}a[,]b");
  check("loadState location", a.GetValue("cmi.location"), "p2");
}

// sharedWrites: a commit carries the stores the SCO wrote, and no other.
{
  const a = { adl: { data: { childArray: [{ id: "s0", storeValue: "v0" }, { id: "s1", storeValue: "v1" }] } }, lecternWritten: { 1: true } };
  const p = rte.sharedWrites(a, { "adl.data.0.id": "s0", "adl.data.0.store": "v0", "cmi.location": "x" });
  check("sharedWrites", JSON.stringify(p), JSON.stringify({ "cmi.location": "x", "adl.data.1.id": "s1", "adl.data.1.store": "v1" }));
}

for (const f of failed) console.log("FAIL " + f);
console.log(n + " checks, " + failed.length + " failed");
process.exitCode = failed.length ? 1 : 0;
