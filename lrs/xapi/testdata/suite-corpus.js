// Dev tool (not part of the build): expands the installed ADL conformance suite's templated
// statement configs (test/<dir>/configs/*.js) into JSON lines for TestSuiteCorpus. It uses the
// suite's own template expansion from the suite checkout; nothing of the suite is copied here.
// Usage, from the suite's root directory: node <this file> v1_0_3|v2_0 > out.jsonl
const suite = process.cwd();
const dir = process.argv[2];
process.env.DIRECTORY = dir;
process.env.EB_NODE_COMMAND = '1'; // the suite's helper skips its .env loading when set
const helper = require(suite + '/test/helper.js');
const fs = require('fs');
for (const f of fs.readdirSync(suite + '/test/' + dir + '/configs')) {
  for (const group of require(suite + '/test/' + dir + '/configs/' + f).config()) {
    for (const t of group.config) {
      let data = t.json;
      if (t.templates) {
        const mock = helper.createTestObject(helper.convertTemplate(JSON.parse(JSON.stringify(t.templates))));
        data = mock[Object.keys(mock)[0]];
      }
      console.log(JSON.stringify({file: f, group: group.name, name: t.name, expect: t.expect, data}));
    }
  }
}
