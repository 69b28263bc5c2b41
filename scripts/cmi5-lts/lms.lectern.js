// Lectern's LMS library for ADL's cmi5 LMS Test Suite (CATAPULT lts/, modelled on the suite's
// lib/lms.template.js). scripts/cmi5-lts.sh copies it into the suite's installed copy as
// lib/lms.lectern.js and points CATAPULT_LMS at it; it talks to a running `lectern all` only
// through its public APIs:
//
//   setup          root creates a tenant (LECTERN_LTS_TENANT-<suite>-<random>)
//   importCourse   POST /engine/api/v1/{tenant}/courses/importJobs (multipart), polls the job;
//                  a refused package (the job's ERROR, or a 400 at upload) is an InvalidPackageError
//   getLaunchUrl   a registration of the course for the actor's account name (one per
//                  registration UUID the suite names: xapiRegistrationId), its launch link
//                  (forceReview for Review; the course preview for Browse), the player session
//                  the link opens, and from the player page the AU's launch route
//                  /player/cmi5/{session}/launch?au=… (the URL the player's frame, or for an
//                  OwnWindow AU the player's window, opens): the suite reads the AU's result from
//                  the top-level document, so it gets the AU itself, not the player around it
//   waiveAU        POST /engine/api/v1/{tenant}/registrations/{id}/cmi5/waive (the AU's id from the
//                  player page's table of contents)
//   abandonSession POST /engine/api/v1/{tenant}/registrations/{id}/cmi5/abandon (the registration
//                  this library last launched the session in)
//   statements     read back at /lrs/TCAPI/{tenant} with the root credentials (the platform
//                  root is an LRS root of every tenant: cmi5 4.2.0.0-2)
"use strict";

const Wreck = require("@hapi/wreck"),
    crypto = require("crypto"),
    {InvalidPackageError} = require("./errors");

const base = (process.env.LECTERN_URL || "http://127.0.0.1:8080").replace(/\/+$/, ""),
    rootAuth = `Basic ${Buffer.from(`${process.env.LECTERN_ROOT_USER || "root"}:${process.env.LECTERN_ROOT_PASSWORD}`).toString("base64")}`,
    state = {tenant: "", courses: [], registrations: {}, aus: {}, last: null};

const api = async (method, path, {payload, headers = {}, auth = rootAuth, json = true} = {}) => {
    const opts = {headers: {Authorization: auth, ...headers}};
    if (payload !== undefined) {
        if (Buffer.isBuffer(payload) || typeof payload === "string") {
            opts.payload = payload;
        }
        else {
            opts.payload = JSON.stringify(payload);
            opts.headers["Content-Type"] = "application/json";
        }
    }
    // An absolute URL is the content origin's (the player's), a path the APIs'.
    const res = await Wreck.request(method, /^https?:/.test(path) ? path : base + path, opts),
        body = await Wreck.read(res),
        text = body.toString("utf8");
    let parsed = text;
    if (json && text.length > 0) {
        try {
            parsed = JSON.parse(text);
        }
        catch (ex) {
            parsed = text;
        }
    }
    return {status: res.statusCode, headers: res.headers, body: parsed, text};
};

const must = (r, what, ...ok) => {
    if (! ok.includes(r.status)) {
        throw new Error(`${what}: ${r.status} ${r.text}`);
    }
    return r;
};

const readStream = (stream) => new Promise((resolve, reject) => {
    const parts = [];
    stream.on("data", (c) => parts.push(c));
    stream.on("end", () => resolve(Buffer.concat(parts)));
    stream.on("error", reject);
});

const engine = (path) => `/engine/api/v1/${encodeURIComponent(state.tenant)}${path}`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// launchRoute follows a launch link to its player session and reads, from the player page, the
// launch route of the auIndex-th AU (AUs in cmi5.xml order). The player runs on the content
// origin, the launch link's own.
const launchRoute = async (link, auIndex) => {
    const origin = new URL(link, base).origin,
        first = must(await api("GET", new URL(link, base).href, {auth: "", json: false}), "launch link", 302, 303),
        page = must(await api("GET", new URL(first.headers.location, origin).href, {auth: "", json: false}), "player page", 200),
        m = /<script[^>]*id="cfg"[^>]*>([\s\S]*?)<\/script>/.exec(page.text);
    if (! m) {
        throw new Error(`no player configuration in the page: ${page.text.slice(0, 300)}`);
    }
    const cfg = JSON.parse(m[1]),
        aus = cfg.activities.filter((a) => a.url);
    if (! aus[auIndex]) {
        throw new Error(`the course has no AU ${auIndex} (${aus.length} AUs)`);
    }
    return {url: origin + aus[auIndex].url, ids: aus.map((a) => a.id)};
};

module.exports = {
    setup: async (testName) => {
        state.tenant = `${process.env.LECTERN_LTS_TENANT || "lts"}-${testName}-${crypto.randomBytes(3).toString("hex")}`.toLowerCase();
        must(await api("POST", "/api/v1/app_management/tenants", {payload: {tenant_id: state.tenant, enabled: true}}), "create tenant", 201);
    },

    teardown: async () => {
        if (state.tenant) {
            await api("DELETE", `/api/v1/app_management/tenants/${state.tenant}`).catch(() => {});
        }
    },

    getLrsEndpoint: () => `${base}/lrs/TCAPI/${state.tenant}`,

    getLrsAuthHeader: () => rootAuth,

    importCourse: async (stream, contentType, filename) => {
        const body = await readStream(stream),
            courseId = `c${state.courses.length + 1}-${crypto.randomBytes(3).toString("hex")}`,
            boundary = `----lts${crypto.randomBytes(8).toString("hex")}`,
            form = Buffer.concat([
                Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`),
                body,
                Buffer.from(`\r\n--${boundary}--\r\n`)
            ]),
            r = await api("POST", engine(`/courses/importJobs?course=${courseId}`),
                {payload: form, headers: {"Content-Type": `multipart/form-data; boundary=${boundary}`}});
        if (r.status === 400) {
            throw new InvalidPackageError(`Invalid package: ${r.text}`);
        }
        must(r, "import", 200);
        let job;
        for (let i = 0; i < 600; i++) {
            job = must(await api("GET", engine(`/courses/importJobs/${r.body.result}`)), "import job", 200).body;
            if (job.status !== "RUNNING") {
                break;
            }
            await sleep(100);
        }
        if (job.status === "ERROR") {
            throw new InvalidPackageError(`Invalid package: ${job.message}`);
        }
        if (job.status !== "COMPLETE") {
            throw new Error(`import did not complete: ${JSON.stringify(job)}`);
        }
        state.courses.push(courseId);
        return courseId;
    },

    getLaunchUrl: async (courseId, auIndex, actor, {registration, launchMode} = {}) => {
        let link, regId = null;
        if (launchMode === "Browse") {
            link = must(await api("GET", engine(`/courses/${courseId}/preview`)), "preview link", 200).body.launchLink;
        }
        else {
            const xreg = registration || crypto.randomUUID();
            regId = state.registrations[xreg] && state.registrations[xreg].id;
            if (! regId) {
                regId = `r-${crypto.randomBytes(6).toString("hex")}`;
                const name = (actor && actor.account && actor.account.name) || "learner";
                must(await api("POST", engine("/registrations"), {payload: {courseId, registrationId: regId, xapiRegistrationId: xreg,
                    learner: {id: name, firstName: name, lastName: "LTS"}}}), "create registration", 204, 200, 201);
                state.registrations[xreg] = {id: regId, courseId};
            }
            const q = launchMode === "Review" ? "?forceReview=true" : "";
            link = must(await api("GET", engine(`/registrations/${regId}/launchLink${q}`)), "launch link", 200).body.launchLink;
        }
        const route = await launchRoute(link, auIndex);
        state.aus[courseId] = route.ids;
        state.last = {registration: regId};
        return route.url;
    },

    cleanup: async () => {
        for (const id of state.courses.splice(0)) {
            await api("DELETE", engine(`/courses/${id}`)).catch(() => {});
        }
    },

    hasWaive: () => true,
    waiveAU: async (registration, auIndex, reason) => {
        const reg = state.registrations[registration];
        if (! reg) {
            throw new Error(`no registration launched with ${registration}`);
        }
        const activityId = (state.aus[reg.courseId] || [])[auIndex];
        must(await api("POST", engine(`/registrations/${reg.id}/cmi5/waive`), {payload: {activityId, reason}}), "waive", 204, 200);
    },

    hasAbandon: () => true,
    abandonSession: async (sessionId) => {
        if (! state.last || ! state.last.registration) {
            throw new Error("no registration launched");
        }
        must(await api("POST", engine(`/registrations/${state.last.registration}/cmi5/abandon`), {payload: {sessionId}}), "abandon", 204, 200);
    }
};
