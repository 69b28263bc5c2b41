// Table tests of values.js, from the SCORM 2004 4th edition RTE book's rules: the data types
// of RTE 4.1.1 (long_identifier_type, time (second,10,0), timeinterval (second,10,2),
// language_type, localized_string_type), the response formats of RTE 4.2.9.1 per interaction
// type, and the collections' index errors (RTE 3.1.7: 301 for GetValue, 351 for SetValue;
// 408 for an entry not created by its id). Run by page_test.go: `node values_test.js` runs
// these tables; `node values_test.js cases.json` runs the cases page_test.go took from ADL's
// DMI script instead. The exit status is the number of failed cases (at most 1).
"use strict";
const fs = require("fs");
const path = require("path");
const vm = require("vm");

// values.js is a browser script that declares one name; a context of its own gets it as the
// page does, with no module system.
function load() {
  const ctx = {};
  const file = path.join(__dirname, "values.js");
  vm.runInNewContext(fs.readFileSync(file, "utf8"), ctx, { filename: file });
  return ctx.scorm2004Values;
}
const values = load();

// Each table row is [input..., want]; a case fails when the function's answer is not want.
const tables = {
  // long_identifier_type: a URI, so no white space; a URN has a NID of 1-32 letters, digits
  // and hyphens (not first), then a NSS.
  identifier: [
    ["q1", true],
    ["http://www.example.com/course/q1", true],
    ["urn:ADL:interaction-id-0001", true],
    ["URN:adl:x", true],
    ["", false],
    ["two words", false],
    ["tab\there", false],
    ["urn:", false],
    ["urn:adl", false],
    ["urn:adl:", false],
    ["urn:-adl:x", false],
    ["urn:" + "a".repeat(32) + ":x", true],
    ["urn:" + "a".repeat(33) + ":x", false],
  ],
  // time (second,10,0): YYYY[-MM[-DD[Thh[:mm[:ss[.s[TZD]]]]]]], years 1970 to 2038, at most
  // two digits of a second's fraction.
  time: [
    ["2005", true],
    ["2005-03", true],
    ["2005-03-05", true],
    ["2005-03-05T14", true],
    ["2005-03-05T14:30", true],
    ["2005-03-05T14:30:15", true],
    ["2005-03-05T14:30:15.1", true],
    ["2005-03-05T14:30:15.12", true],
    // A time zone only after a fraction of a second, as the format nests it; hours 00-23,
    // minutes 00-59.
    ["2005-03-05T14:30:15.12Z", true],
    ["2005-03-05T14:30:15.1+05:30", true],
    ["2005-03-05T14:30:15.1-05", true],
    ["2005-03-05T14:30:15.1+23:59", true],
    ["2005-03-05T14:30:15.1-00", true],
    ["2005-03-05T14:30:15Z", false],
    ["2005-03-05T14:30:15+05:30", false],
    ["2005-03-05T14:30Z", false],
    ["2005-03-05T14-03", false],
    ["2005-03-05T14:30:15.1+24", false],
    ["2005-03-05T14:30:15.1-05:60", false],
    ["2005-03-05T14:30:15.1+5", false],
    ["2005-03-05T14:30:15.1+0530", false],
    ["1970-01-01T00:00:00", true],
    ["2038-01-19T03:14:07", true],
    ["1969-12-31T23:59:59", false],
    ["2039", false],
    ["2005-03-05T14:30:15.123", false],
    ["2005-13-01", false],
    ["2005-00-01", false],
    ["2005-03-32", false],
    ["2005-03-00", false],
    ["2005-03-05T24:00", false],
    ["2005-03-05T14:60", false],
    ["2005-03-05T14:30:60", false],
    ["2005-3-5", false],
    ["05-03-05", false],
    ["2005-03-05 14:30", false],
    ["2005-03-05T", false],
    ["", false],
    ["junk", false],
  ],
  // timeinterval (second,10,2): P[yY][mM][dD][T[hH][nM][s[.s]S]], T only before a time part,
  // at most two digits of a second's fraction; no weeks, no sign.
  duration: [
    ["PT1H30M", true],
    ["P1Y2M3DT4H5M6.78S", true],
    ["PT0S", true],
    ["P0D", true],
    ["PT1.5S", true],
    ["P10Y", true],
    ["PT90M", true],
    ["P", false],
    ["PT", false],
    ["P1DT", false],
    ["PT1.567S", false],
    ["P1W", false],
    ["PT-1S", false],
    ["-PT1S", false],
    ["1H", false],
    ["P1H", false],
    ["PT1S2M", false],
    ["", false],
  ],
  // language_type: an RFC 3066 code. The primary subtag is ISO 639 (two or three letters, or
  // qaa-qtz for local use), x for a private code or i for an IANA one; a two-letter second
  // subtag is an ISO 3166 country; letters in any case.
  lang: [
    ["en", true],
    ["EN", true],
    ["en-US", true],
    ["en-us", true],
    ["fr-CA", true],
    ["eng", true],
    ["fre", true],
    ["de-AT", true],
    ["zh-Hant", true],
    ["zh-min-nan", true],
    ["de-at-1901", true],
    ["i-klingon", true],
    ["x-klingon", true],
    ["qaa", true],
    ["qtz", true],
    ["sgn-US", true],
    ["en-GB-oed", true],
    ["", false],
    ["x", false],
    ["e", false],
    ["en-", false],
    ["-en", false],
    ["en_US", false],
    ["en US", false],
    ["en-ZZ", false],
    ["en-u", false],
    ["abcdefghi", false],
    ["qua", false],
    ["frl", false],
    ["sp", false],
    ["ruq-JM", false],
    ["i-xyz", false],
  ],
  // A short_identifier_type inside a response: a URI.
  uri: [
    ["a", true],
    ["choice1", true],
    ["http://example.com/a?b=c#d", true],
    ["a%20b", true],
    ["urn:adl:x", true],
    ["", false],
    [" ", false],
    ["a b", false],
    ["a{b", false],
    ["a}b", false],
    ["a<b", false],
    ["a\"b", false],
    ["a|b", false],
    ["a\\b", false],
    ["a%2", false],
    ["a%zz", false],
    ["a#b#c", false],
    ["http:", false],
    ["urn:x", false],
  ],
  number: [
    ["0", true],
    ["-1", true],
    ["+2.5", true],
    [".5", true],
    ["1e3", true],
    ["1.5E-3", true],
    ["", false],
    ["-", false],
    ["abc", false],
    ["1,5", false],
    ["1e", false],
    ["0x10", false],
  ],
  // A numeric interaction's pattern: min[:]max, either may be left out, min <= max.
  range: [
    ["1[:]5", true],
    ["-5[:]-1", true],
    ["[:]5", true],
    ["1[:]", true],
    ["[:]", true],
    ["2.5[:]2.5", true],
    ["5[:]1", false],
    ["1", false],
    ["1[:]2[:]3", false],
    ["a[:]5", false],
    ["1[:]b", false],
    ["1:5", false],
  ],
};

// response(type, pattern, value): RTE 4.2.9.1, learner_response (pattern false) and
// correct_responses.n.pattern (pattern true) of each interaction type.
const responses = [
  // true-false: "true" or "false".
  ["true-false", false, "true", true],
  ["true-false", false, "false", true],
  ["true-false", true, "true", true],
  ["true-false", false, "True", false],
  ["true-false", false, "t", false],
  ["true-false", false, "1", false],
  ["true-false", false, "", false],
  ["true-false", true, "", false],
  // choice: a set of unique short_identifier_types; the empty set too.
  ["choice", false, "", true],
  ["choice", true, "", true],
  ["choice", false, "a", true],
  ["choice", false, "a[,]b[,]c", true],
  ["choice", true, "a[,]b", true],
  ["choice", false, "a[,]a", false],
  ["choice", false, "a[,]", false],
  ["choice", false, "[,]a", false],
  ["choice", false, "[,]", false],
  ["choice", false, "a[,][,]b", false],
  ["choice", false, "a b", false],
  ["choice", true, "a[,]b c", false],
  // fill-in: strings, each of which may start with {lang=}; the pattern may start with
  // {case_matters=} and {order_matters=} (booleans), each at most once.
  ["fill-in", false, "anything at all", true],
  ["fill-in", false, "", true],
  ["fill-in", false, "{lang=en}colour[,]{lang=en-US}color", true],
  ["fill-in", false, "{lang=frl}x", false],
  ["fill-in", false, "a[,]{lang=sp}b", false],
  ["fill-in", true, "{case_matters=true}Paris", true],
  ["fill-in", true, "{order_matters=false}{case_matters=true}a[,]b", true],
  ["fill-in", true, "{case_matters=false}{lang=de}Berlin", true],
  ["fill-in", true, "{case_matters=maybe}Paris", false],
  ["fill-in", true, "{order_matters=1}a[,]b", false],
  ["fill-in", true, "{lang=frl}x", false],
  // In a learner response {case_matters=} is no delimiter, just text.
  ["fill-in", false, "{case_matters=maybe}Paris", true],
  // long-fill-in: one string that may start with {lang=}; the pattern also with
  // {case_matters=}.
  ["long-fill-in", false, "A long answer, with commas[,] and all.", true],
  ["long-fill-in", false, "{lang=en}text", true],
  ["long-fill-in", false, "{lang=frl}text", false],
  ["long-fill-in", true, "{case_matters=true}{lang=en}text", true],
  ["long-fill-in", true, "{lang=en}{case_matters=false}text", true],
  ["long-fill-in", true, "{case_matters=yes}text", false],
  ["long-fill-in", false, "{case_matters=yes}text", true],
  // likert: one short_identifier_type.
  ["likert", false, "strongly_agree", true],
  ["likert", true, "likert_3", true],
  ["likert", false, "", false],
  ["likert", false, "strongly agree", false],
  // matching: source[.]target pairs of short_identifier_types; an empty learner response.
  ["matching", false, "a[.]b", true],
  ["matching", true, "a[.]b[,]c[.]d", true],
  ["matching", false, "", true],
  ["matching", true, "", false],
  ["matching", false, "a[.]", false],
  ["matching", false, "[.]b", false],
  ["matching", false, "a", false],
  ["matching", false, "a[.]b[.]c", false],
  ["matching", false, "a[.]b[,]", false],
  ["matching", false, "a b[.]c", false],
  // performance: step_name[.]step_answer records, either part may be left out but not both;
  // an answer holding [:] is a numeric range; the pattern may start with {order_matters=}.
  ["performance", false, "step1[.]answer", true],
  ["performance", false, "[.]answer", true],
  ["performance", false, "step1[.]", true],
  ["performance", false, "step1[.]a[,]step2[.]b", true],
  ["performance", true, "{order_matters=false}s1[.]1[:]5[,]s2[.]x", true],
  ["performance", true, "s1[.]1[:]", true],
  ["performance", false, "[.]", false],
  ["performance", false, "step1", false],
  ["performance", false, "s1[.]a[,]", false],
  ["performance", false, "a b[.]x", false],
  ["performance", true, "s1[.]5[:]1", false],
  ["performance", true, "s1[.]1[:]x", false],
  ["performance", true, "{order_matters=no}s1[.]a", false],
  // sequencing: an ordered list of short_identifier_types, which may repeat; not empty.
  ["sequencing", false, "a[,]b[,]c", true],
  ["sequencing", true, "c[,]a[,]b", true],
  ["sequencing", false, "a[,]a", true],
  ["sequencing", false, "", false],
  ["sequencing", false, "a[,]", false],
  ["sequencing", false, "a b", false],
  // numeric: the learner response is a real number, the pattern a range.
  ["numeric", false, "3.14", true],
  ["numeric", false, "-1", true],
  ["numeric", false, "1e3", true],
  ["numeric", false, "", false],
  ["numeric", false, "abc", false],
  ["numeric", false, "1[:]5", false],
  ["numeric", true, "1[:]5", true],
  ["numeric", true, "[:]5", true],
  ["numeric", true, "5[:]1", false],
  ["numeric", true, "3", false],
  // other: any characterstring.
  ["other", false, "anything {at} all [,] [.]", true],
  ["other", true, "", true],
];

// collectionError(el, setting, count), with these collections' counts (any other: 0).
const counts = {
  "cmi.interactions": 2,
  "cmi.interactions.0.objectives": 1,
  "cmi.interactions.0.correct_responses": 1,
  "cmi.objectives": 1,
  "cmi.comments_from_learner": 1,
};
const collectionErrors = [
  // [element, SetValue (else GetValue), want]
  ["cmi.interactions.0.id", false, 0],
  ["cmi.interactions.1.type", true, 0],
  ["cmi.interactions.2.id", false, 301], // nothing at the end to read
  ["cmi.interactions.2.id", true, 0], // a new interaction, created by its id
  ["cmi.interactions.2.type", true, 408], // a new interaction not created by its id
  ["cmi.interactions.3.id", true, 351], // past the end
  ["cmi.interactions.3.id", false, 301],
  ["cmi.interactions.01.id", false, 301], // not an index as the RTE writes one
  ["cmi.interactions.01.id", true, 351],
  ["cmi.interactions.-1.id", true, 351],
  ["cmi.interactions.x.id", false, 301],
  ["cmi.objectives.1.id", true, 0],
  ["cmi.objectives.1.score.raw", true, 408],
  ["cmi.objectives.1.score.raw", false, 301],
  ["cmi.comments_from_learner.1.comment", true, 0], // comments have no id
  ["cmi.comments_from_learner.1.comment", false, 301],
  ["cmi.comments_from_learner.2.comment", true, 351],
  ["cmi.comments_from_lms.0.comment", false, 301],
  ["cmi.interactions.0.objectives.0.id", false, 0],
  ["cmi.interactions.0.objectives.1.id", true, 0],
  ["cmi.interactions.0.objectives.1.id", false, 301],
  ["cmi.interactions.0.objectives.2.id", true, 351],
  ["cmi.interactions.0.objectives.01.id", true, 351],
  ["cmi.interactions.0.correct_responses.1.pattern", true, 0],
  ["cmi.interactions.0.correct_responses.1.pattern", false, 301],
  ["cmi.interactions.0.correct_responses.2.pattern", true, 351],
  ["cmi.interactions.1.correct_responses.0.pattern", false, 301],
  ["cmi.interactions.1.correct_responses.0.pattern", true, 0],
  // Not an entry of a collection: no index to check.
  ["cmi.interactions._count", false, 0],
  ["cmi.completion_status", true, 0],
  ["adl.data.9.store", false, 0],
];

// element(el, value): the data type of the elements values.js checks.
const elements = [
  ["cmi.interactions.0.id", "urn:ADL:q1", true],
  ["cmi.interactions.0.id", "", false],
  ["cmi.objectives.0.id", "obj 1", false],
  ["cmi.interactions.0.objectives.0.id", "obj1", true],
  ["cmi.interactions.0.objectives.0.id", "urn:x", false],
  ["cmi.interactions.0.timestamp", "2005-03-05T12:00:00", true],
  ["cmi.interactions.0.timestamp", "junk", false],
  ["cmi.comments_from_learner.0.timestamp", "1969", false],
  ["cmi.session_time", "PT1H", true],
  ["cmi.session_time", "P", false],
  ["cmi.interactions.0.latency", "PT", false],
  ["cmi.interactions.0.latency", "PT2.5S", true],
  ["cmi.learner_preference.language", "", true],
  ["cmi.learner_preference.language", "en-US", true],
  ["cmi.learner_preference.language", "frl", false],
  ["cmi.comments_from_learner.0.comment", "{lang=en}Hello", true],
  ["cmi.comments_from_learner.0.comment", "{lang=frl}Hello", false],
  ["cmi.comments_from_learner.0.comment", "no language", true],
  ["cmi.objectives.0.description", "{lang=sp}x", false],
  ["cmi.interactions.0.description", "{lang=en-GB}x", true],
  // Not a localized_string_type: {lang=} is plain text there.
  ["cmi.location", "{lang=frl}x", true],
  ["cmi.suspend_data", "anything", true],
];

const blankable = [
  ["cmi.location", true],
  ["cmi.suspend_data", true],
  ["cmi.learner_preference.language", true],
  ["cmi.comments_from_learner.3.comment", true],
  ["cmi.comments_from_learner.3.location", true],
  ["cmi.objectives.0.description", true],
  ["cmi.interactions.0.description", true],
  ["cmi.completion_status", false],
  ["cmi.interactions.0.id", false],
  ["cmi.comments_from_learner.0.timestamp", false],
  ["cmi.interactions.0.learner_response", false],
];

const types = ["true-false", "choice", "fill-in", "long-fill-in", "likert", "matching", "performance", "sequencing", "numeric", "other"];
const single = { "true-false": true, likert: true, numeric: true, other: true };

// run checks each case and returns how many there were and which failed.
function run() {
  const failed = [];
  let n = 0;
  function check(what, got, want) {
    n++;
    if (got !== want) failed.push(what + ": got " + JSON.stringify(got) + ", want " + JSON.stringify(want));
  }
  for (const name of Object.keys(tables)) {
    for (const [v, want] of tables[name]) check(name + "(" + JSON.stringify(v) + ")", values[name](v), want);
  }
  for (const [type, pattern, v, want] of responses) {
    check("response(" + JSON.stringify(type) + ", " + pattern + ", " + JSON.stringify(v) + ")", values.response(type, pattern, v), want);
  }
  const count = (c) => counts[c] || 0;
  for (const [el, setting, want] of collectionErrors) {
    check("collectionError(" + JSON.stringify(el) + ", " + setting + ")", values.collectionError(el, setting, count), want);
  }
  for (const [el, v, want] of elements) check("element(" + JSON.stringify(el) + ", " + JSON.stringify(v) + ")", values.element(el, v), want);
  for (const [el, want] of blankable) check("blankable(" + JSON.stringify(el) + ")", values.blankable(el), want);
  for (const t of types) {
    check("singleCorrectResponse(" + JSON.stringify(t) + ")", values.singleCorrectResponse(t), !!single[t]);
    // scorm2004.js creates a correct response with the placeholder before storing the real
    // pattern: it must be a valid pattern itself.
    check("response(" + JSON.stringify(t) + ", true, placeholder)", values.response(t, true, values.placeholder(t)), true);
  }
  return { n, failed };
}

// runADL checks the cases page_test.go took from ADL's DMI script: each an element's value
// with whether the RTE takes it ({el, type, pattern, value, want, where}).
function runADL(file) {
  const failed = [];
  const cases = JSON.parse(fs.readFileSync(file, "utf8"));
  for (const c of cases) {
    const got = c.type ? values.response(c.type, c.pattern, c.value) : values.element(c.el, c.value);
    if (got !== c.want) failed.push(c.where + " " + c.el + (c.type ? " (" + c.type + ")" : "") + " = " + JSON.stringify(c.value).slice(0, 200) + ": got " + got + ", want " + c.want);
  }
  return { n: cases.length, failed };
}

const r = process.argv[2] ? runADL(process.argv[2]) : run();
for (const f of r.failed) console.log("FAIL " + f);
console.log(r.n + " cases, " + r.failed.length + " failed");
process.exitCode = r.failed.length ? 1 : 0;
