package coursetest

// AICC, cmi5 and xAPI packages; course/aicc, course/cmi5 and course/tincan parse them in
// their golden tests.

// aiccSingle is the smallest complete AICC course: one AU under ROOT.
func aiccSingle() map[string]string {
	return map[string]string{
		"course.crs": "[Course]\nCourse_Creator=Lectern Tests\nCourse_ID=CRS-1\nCourse_System=HTML\n" +
			"Course_Title=Fire Safety Basics\nLevel=1\nMax_Fields_CST=2\nTotal_AUs=1\nTotal_Blocks=0\nVersion=4.0\n" +
			"[Course_Behavior]\nMax_Normal=1\n[Course_Description]\nA short course on fire safety.\n",
		"course.au": `"System_ID","Type","Command_Line","File_Name","Max_Score","Mastery_Score","Max_Time_Allowed","Time_Limit_Action","System_Vendor","Core_Vendor","Web_Launch","AU_Password"` + "\n" +
			`"A1","lesson","","index.html","100","80","00:30:00","exit,message","","start=1","",""` + "\n",
		"course.des": `"System_ID","Developer_ID","Title","Description"` + "\n" +
			`"A1","FS-01","Fire Safety","The whole course in one unit"` + "\n",
		"course.cst": `"block","member"` + "\n" + `"ROOT","A1"` + "\n",
		"index.html": "<html></html>",
	}
}

// aiccMulti has nested blocks, columns in a different order in every file, quoted commas and
// escaped quotes, a BOM, CRLF line ends, blank lines, trailing commas, mixed-case extensions,
// optional .ort/.pre files, and a few oddities that must become warnings.
func aiccMulti() map[string]string {
	bom := "\xEF\xBB\xBF"
	return map[string]string{
		"Safety.CRS": bom + "[COURSE]\r\ncourse_id = CRS-2 \r\nCourse_Title=\"Workplace Safety, Advanced\"\r\n" +
			"Course_Creator=Lectern Tests\r\nTotal_AUs=4\r\nTotal_Blocks=2\r\nTotal_Objectives=2\r\nVersion=3.5\r\n" +
			"[Course_Description]\r\nTwo modules.\r\nSecond line.\r\n",
		"Safety.au": bom +
			"File_Name,Mastery_Score,System_ID,Command_Line,Core_Vendor,Max_Score,Color,Type,\r\n" +
			"\r\n" +
			"m1/intro.html, 70 , A1 ,,,100,blue,lesson,\r\n" +
			"\"m1/quiz.html?mode=test\",\"85.5\",\"A2\",\"lang=en&x=1\",\"key=\"\"v\"\"\",,,test,\r\n" +
			"\"https://cdn.example.com/m2/start.html\",,A3,,,,,,\r\n" +
			"m2\\missing.html,abc,A4,,,,,,\r\n",
		"Safety.des": bom +
			"Title,Description,System_ID,Developer_ID\r\n" +
			"\"Introduction, part 1\",\"Says \"\"hello\"\", then goes\",A1,DEV-1\r\n" +
			"Quiz,,A2,\r\n" +
			"Hosted Unit,,A3,\r\n" +
			"Unit Four,,A4,\r\n" +
			"\"Module 1: Basics, Rules\",First module,B1,\r\n" +
			"Module 2,,B2,\r\n" +
			"Know the exits,,J1,\r\n",
		"Safety.cst": bom +
			"\"Block\",\"Member\",\"Member\",\"Member\"\r\n" +
			"\"ROOT\",\"B1\",\"A4\",\"\"\r\n" +
			"\"B1\",\"A1\",\"B2\",\r\n" +
			"\"B1\",\"A2\",,\r\n" + // continuation row for B1
			"\r\n" +
			"\"B2\",\"A3\",,\r\n",
		"Safety.ort":            "Course_Element,Member,Member\r\nA2,J1,J2\r\nB1,J1,\r\n",
		"Safety.pre":            "Prerequisite,Structure_Element\r\nA1,A2\r\n\"A1&A2\",B2\r\n",
		"m1/intro.html":         "x",
		"m1/quiz.html":          "x",
		"__MACOSX/._Safety.CRS": "junk",
		".DS_Store":             "junk",
	}
}

// cmi5NestedXML has a block inside a block, every moveOn value, masteryScore, an absolute-URL AU,
// objectives, launch parameters and an entitlement key, langstrings in several languages, and
// an extension element in a foreign namespace.
const cmi5NestedXML = `<?xml version="1.0" encoding="utf-8"?>
<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd" xmlns:ext="https://example.com/ext">
  <course id=" https://example.com/courses/safety ">
    <title>
      <langstring lang="fr-FR">Sécurité</langstring>
      <langstring lang="en-US">Workplace Safety</langstring>
    </title>
    <description><langstring lang="en-US">A cmi5 course with nested blocks.</langstring></description>
    <ext:vendor>ignored</ext:vendor>
  </course>
  <objectives>
    <objective id="https://example.com/objectives/exits">
      <title><langstring lang="en">Know the exits</langstring></title>
      <description><langstring lang="en">Find every exit.</langstring></description>
    </objective>
  </objectives>
  <au id="https://example.com/au/welcome" moveOn="NotApplicable">
    <title><langstring lang="de">Willkommen</langstring><langstring lang="es">Bienvenido</langstring></title>
    <description><langstring lang="de">Start</langstring></description>
    <url>welcome/index.html</url>
  </au>
  <block id="https://example.com/block/module-1">
    <title><langstring lang="en">Module 1</langstring></title>
    <description><langstring lang="en">First module</langstring></description>
    <objectives><objective idref="https://example.com/objectives/exits"/></objectives>
    <au id="https://example.com/au/m1-lesson" moveOn="Completed" launchMethod="OwnWindow"
        activityType="http://adlnet.gov/expapi/activities/lesson">
      <title><langstring lang="en-US">Lesson</langstring></title>
      <description><langstring lang="en-US">Read this</langstring></description>
      <url>./m1/lesson.html?chapter=1</url>
      <launchParameters>{"mode":"full"}</launchParameters>
      <entitlementKey>KEY-123</entitlementKey>
    </au>
    <block id="https://example.com/block/module-1/quizzes">
      <title><langstring lang="en">Quizzes</langstring></title>
      <description><langstring lang="en">Inner block</langstring></description>
      <au id="https://example.com/au/m1-quiz" moveOn="CompletedAndPassed" masteryScore="0.8">
        <title><langstring lang="en">Quiz</langstring></title>
        <description><langstring lang="en">Test yourself</langstring></description>
        <objectives><objective idref="https://example.com/objectives/exits"/></objectives>
        <url>m1/quiz.html</url>
      </au>
      <au id="https://example.com/au/m1-exam" moveOn="Passed" masteryScore="1">
        <title><langstring lang="en">Exam</langstring></title>
        <description><langstring lang="en">Final exam</langstring></description>
        <url>m1/exam.html</url>
      </au>
    </block>
  </block>
  <au id="https://example.com/au/hosted" moveOn="CompletedOrPassed" masteryScore=".5">
    <title><langstring lang="en-us">Hosted</langstring></title>
    <description><langstring lang="en-us">Lives on a CDN</langstring></description>
    <url>https://cdn.example.com/au/start.html</url>
  </au>
</courseStructure>`

// cmi5MinimalXML is the smallest valid structure: one AU, no namespace (a warning).
const cmi5MinimalXML = `<courseStructure>
  <course id="urn:example:course:1"><title><langstring>Minimal</langstring></title><description><langstring/></description></course>
  <au id="urn:example:au:1"><title><langstring>Only AU</langstring></title><description><langstring/></description><url>index.html</url></au>
</courseStructure>`

const tincanSingleXML = `<?xml version="1.0" encoding="utf-8" ?>
<tincan xmlns="http://projecttincan.com/tincan.xsd">
  <activities>
    <activity id=" http://example.com/courses/golf " type="http://adlnet.gov/expapi/activities/course">
      <name>Golf Example</name>
      <description lang="en-US">An example course about golf.</description>
      <launch lang="en-us">index.html</launch>
    </activity>
  </activities>
</tincan>`

const tincanMultiXML = `<?xml version="1.0" encoding="UTF-8"?>
<tincan xmlns="http://projecttincan.com/tincan.xsd">
  <activities>
    <activity id="http://example.com/act/objective-1" type="http://adlnet.gov/expapi/activities/objective">
      <name lang="en-US">Objective one</name>
    </activity>
    <activity id="http://example.com/course/safety" type="http://adlnet.gov/expapi/activities/course">
      <name lang="fr">Sécurité</name>
      <name lang="und">Safety &amp; Health</name>
      <description lang="de">Beschreibung</description>
      <description lang="en-US">Course description</description>
    </activity>
    <activity id="http://example.com/course/safety/m1" type="http://adlnet.gov/expapi/activities/module">
      <name lang="en-US">Module 1</name>
      <launch lang="und">./m1/index.html?start=1</launch>
    </activity>
    <activity id="http://example.com/course/safety/m2" type="http://adlnet.gov/expapi/activities/module">
      <name xml:lang="en-US">Module 2</name>
      <launch lang="en-US">https://cdn.example.com/m2/index.html</launch>
    </activity>
    <activity id="http://example.com/course/safety/m3" type="http://adlnet.gov/expapi/activities/module">
      <name lang="en-US">Module 3</name>
      <launch lang="en-US">m3/gone.html</launch>
    </activity>
  </activities>
</tincan>`
