package coursetest

// SCORM manifests: course/scorm's tests parse them and compare the parse with its golden files
// (all but scorm2004Deep, which only the server's import golden test uses).

// Page is the tiny HTML page that stands for every content file of a SCORM fixture.
const Page = "<!doctype html><title>x</title><p>content</p>"

// NS12 declares the SCORM 1.2 namespaces (content packaging, adlcp, imsmd, xsi) as attributes
// for a <manifest> start tag, for tests that write a manifest of their own.
const NS12 = `xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p2"
  xmlns:imsmd="http://www.imsglobal.org/xsd/imsmd_rootv1p2p1"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`

// NS2004 declares the SCORM 2004 namespaces (content packaging, adlcp, adlseq, adlnav, imsss,
// lom) as attributes for a <manifest> start tag.
const NS2004 = `xmlns="http://www.imsglobal.org/xsd/imscp_v1p1"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_v1p3"
  xmlns:adlseq="http://www.adlnet.org/xsd/adlseq_v1p3"
  xmlns:adlnav="http://www.adlnet.org/xsd/adlnav_v1p3"
  xmlns:imsss="http://www.imsglobal.org/xsd/imsss"
  xmlns:lom="http://ltsc.ieee.org/xsd/LOM"`

// SCORM 1.2, one SCO, inline imsmd metadata; one listed image is absent.
const manifest12Single = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.single12" version="1.3" ` + NS12 + `>
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
    <imsmd:lom>
      <imsmd:general>
        <imsmd:title><imsmd:langstring xml:lang="en">Fire Safety (metadata)</imsmd:langstring></imsmd:title>
        <imsmd:language>en-US</imsmd:language>
        <imsmd:description><imsmd:langstring>How to use an extinguisher.</imsmd:langstring></imsmd:description>
        <imsmd:keyword><imsmd:langstring>fire</imsmd:langstring></imsmd:keyword>
        <imsmd:keyword><imsmd:langstring>safety</imsmd:langstring></imsmd:keyword>
      </imsmd:general>
    </imsmd:lom>
  </metadata>
  <organizations default="ORG-1">
    <organization identifier="ORG-1">
      <title>Fire Safety</title>
      <item identifier=" ITEM-1 " identifierref="RES-1">
        <title>Fire Safety Module</title>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="RES-1" type="webcontent" adlcp:scormtype="sco" href="index.html">
      <file href="index.html"/>
      <file href="images/logo.png"/>
      <file href="scripts/api.js"/>
    </resource>
  </resources>
</manifest>`

// SCORM 1.2, several SCOs with the adlcp item data, an asset, external metadata (one file
// present, one missing) and an invisible item.
const manifest12Multi = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.multi12" version="1" ` + NS12 + `>
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>1.2</schemaversion>
    <adlcp:location>meta/course.xml</adlcp:location>
  </metadata>
  <organizations default="TOC">
    <organization identifier="TOC" structure="hierarchical">
      <title>Spreadsheet Basics</title>
      <item identifier="intro" identifierref="r_intro" isvisible="true">
        <title>Introduction</title>
        <adlcp:datafromlms>lang=en</adlcp:datafromlms>
        <metadata><adlcp:location>meta/missing.xml</adlcp:location></metadata>
      </item>
      <item identifier="lesson1" identifierref="r_l1" parameters="?chapter=1">
        <title>Lesson 1</title>
        <adlcp:prerequisites type="aicc_script">intro</adlcp:prerequisites>
        <adlcp:maxtimeallowed>00:30:00</adlcp:maxtimeallowed>
        <adlcp:timelimitaction>exit,message</adlcp:timelimitaction>
        <adlcp:masteryscore>80</adlcp:masteryscore>
      </item>
      <item identifier="quiz" identifierref="r_quiz">
        <title>Final Quiz</title>
        <adlcp:prerequisites type="aicc_script">intro&amp;lesson1</adlcp:prerequisites>
        <adlcp:masteryscore>70.5</adlcp:masteryscore>
      </item>
      <item identifier="glossary" identifierref="r_gloss" isvisible="false">
        <title>Glossary</title>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="r_intro" type="webcontent" adlcp:scormtype="sco" href="intro/index.html">
      <file href="intro/index.html"/>
      <dependency identifierref="r_common"/>
    </resource>
    <resource identifier="r_l1" type="webcontent" adlcp:scormtype="sco" href="lesson1/index.html?mode=normal">
      <file href="lesson1/index.html"/>
      <dependency identifierref="r_common"/>
    </resource>
    <resource identifier="r_quiz" type="webcontent" adlcp:scormtype="sco" href="quiz/quiz.html">
      <file href="quiz/quiz.html"/>
    </resource>
    <resource identifier="r_gloss" type="webcontent" adlcp:scormtype="asset" href="glossary.html">
      <file href="glossary.html"/>
    </resource>
    <resource identifier="r_common" type="webcontent" adlcp:scormtype="asset">
      <file href="common/api.js"/>
      <file href="common/style.css"/>
    </resource>
  </resources>
</manifest>`

const courseLOM = `<?xml version="1.0"?>
<lom xmlns="http://www.imsglobal.org/xsd/imsmd_rootv1p2p1">
  <general>
    <title><langstring xml:lang="en">Spreadsheet Basics (LOM)</langstring></title>
    <language>en</language>
    <description><langstring>Cells, formulas and charts.</langstring></description>
    <keyword><langstring>spreadsheet</langstring></keyword>
  </general>
  <lifecycle>
    <contribute>
      <role><source><langstring>LOMv1.0</langstring></source><value><langstring>Author</langstring></value></role>
      <centity><vcard>BEGIN:VCARD
FN:Ada Lovelace
END:VCARD</vcard></centity>
    </contribute>
  </lifecycle>
  <educational>
    <typicallearningtime><datetime>PT1H</datetime></typicallearningtime>
  </educational>
</lom>`

// SCORM 1.1: schemaversion 1.1 with the 1.1 adlcp namespace.
const manifest11 = `<?xml version="1.0"?>
<manifest identifier="course11" xmlns="http://www.imsproject.org/xsd/imscp_rootv1p1p2"
  xmlns:adlcp="http://www.adlnet.org/xsd/adlcp_rootv1p1">
  <metadata><schema>ADL SCORM</schema><schemaversion>1.1</schemaversion></metadata>
  <organizations default="o1">
    <organization identifier="o1">
      <title>Legacy Course</title>
      <item identifier="i1" identifierref="r1">
        <title>Only Lesson</title>
        <adlcp:masteryscore>60</adlcp:masteryscore>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="lesson.htm">
      <file href="lesson.htm"/>
    </resource>
  </resources>
</manifest>`

// SCORM 2004 2nd edition (CAM 1.3): nested items, control mode, pre/post rules and the
// text form of completionThreshold.
const manifest2004v2 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="ed2" version="1.0" ` + NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>CAM 1.3</schemaversion></metadata>
  <organizations default="ORG">
    <organization identifier="ORG">
      <title>Photosynthesis</title>
      <item identifier="MOD1">
        <title>Module 1</title>
        <item identifier="SCO1" identifierref="RES1">
          <title>Light reactions</title>
          <adlcp:completionThreshold>0.75</adlcp:completionThreshold>
          <adlcp:dataFromLMS>level=1</adlcp:dataFromLMS>
          <adlcp:timeLimitAction>continue,no message</adlcp:timeLimitAction>
        </item>
        <item identifier="SCO2" identifierref="RES2">
          <title>Calvin cycle</title>
          <imsss:sequencing>
            <imsss:sequencingRules>
              <imsss:preConditionRule>
                <imsss:ruleConditions conditionCombination="any">
                  <imsss:ruleCondition referencedObjective="obj-light" operator="not" condition="satisfied"/>
                  <imsss:ruleCondition condition="attempted"/>
                </imsss:ruleConditions>
                <imsss:ruleAction action="disabled"/>
              </imsss:preConditionRule>
              <imsss:postConditionRule>
                <imsss:ruleConditions>
                  <imsss:ruleCondition condition="satisfied"/>
                </imsss:ruleConditions>
                <imsss:ruleAction action="continue"/>
              </imsss:postConditionRule>
            </imsss:sequencingRules>
          </imsss:sequencing>
        </item>
        <imsss:sequencing>
          <imsss:controlMode choice="false" flow="true" forwardOnly="true"/>
        </imsss:sequencing>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="RES1" type="webcontent" adlcp:scormType="sco" href="m1/light.html">
      <file href="m1/light.html"/>
    </resource>
    <resource identifier="RES2" type="webcontent" adlcp:scormType="sco" href="m1/calvin.html">
      <file href="m1/calvin.html"/>
    </resource>
  </resources>
</manifest>`

// SCORM 2004 3rd edition: a sequencing collection referenced by IDRef, objectives with
// mapInfo and satisfiedByMeasure, rollup rules, limit conditions, randomization, delivery
// controls and the adlseq extensions; inline IEEE LOM.
const manifest2004v3 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="ed3" version="2" ` + NS2004 + `>
  <metadata>
    <schema>ADL SCORM</schema>
    <schemaversion>2004 3rd Edition</schemaversion>
    <lom:lom>
      <lom:general>
        <lom:title><lom:string language="en">Golf Explained</lom:string></lom:title>
        <lom:description><lom:string language="en">Rules and etiquette.</lom:string></lom:description>
        <lom:keyword><lom:string language="en">golf</lom:string></lom:keyword>
        <lom:language>en</lom:language>
      </lom:general>
      <lom:educational>
        <lom:typicalLearningTime><lom:duration>PT45M</lom:duration></lom:typicalLearningTime>
      </lom:educational>
    </lom:lom>
  </metadata>
  <organizations default="golf">
    <organization identifier="golf" adlseq:objectivesGlobalToSystem="false">
      <title>Golf Explained - Sequencing</title>
      <item identifier="playing" >
        <title>Playing the Game</title>
        <item identifier="playing_sco" identifierref="res_playing">
          <title>How to Play</title>
          <adlcp:completionThreshold>0.5</adlcp:completionThreshold>
          <imsss:sequencing IDRef="content_seq">
            <imsss:limitConditions attemptLimit="3" attemptAbsoluteDurationLimit="PT1H"/>
            <imsss:objectives>
              <imsss:primaryObjective objectiveID="playing_satisfied" satisfiedByMeasure="true">
                <imsss:minNormalizedMeasure>0.8</imsss:minNormalizedMeasure>
                <imsss:mapInfo targetObjectiveID="com.example.golf.playing" writeSatisfiedStatus="true" writeNormalizedMeasure="true"/>
              </imsss:primaryObjective>
              <imsss:objective objectiveID="secondary">
                <imsss:mapInfo targetObjectiveID="com.example.golf.secondary" readNormalizedMeasure="false"/>
              </imsss:objective>
            </imsss:objectives>
            <imsss:deliveryControls tracked="true" completionSetByContent="true" objectiveSetByContent="true"/>
          </imsss:sequencing>
        </item>
        <item identifier="etiquette_sco" identifierref="res_etiquette">
          <title>Etiquette</title>
          <imsss:sequencing IDRef="content_seq"/>
        </item>
        <imsss:sequencing>
          <imsss:controlMode choice="true" flow="true" choiceExit="false"/>
          <imsss:rollupRules rollupObjectiveSatisfied="true" rollupProgressCompletion="true" objectiveMeasureWeight="0.5">
            <imsss:rollupRule childActivitySet="atLeastCount" minimumCount="1">
              <imsss:rollupConditions conditionCombination="any">
                <imsss:rollupCondition condition="satisfied"/>
              </imsss:rollupConditions>
              <imsss:rollupAction action="satisfied"/>
            </imsss:rollupRule>
            <imsss:rollupRule childActivitySet="atLeastPercent" minimumPercent="0.5">
              <imsss:rollupConditions>
                <imsss:rollupCondition operator="not" condition="attempted"/>
              </imsss:rollupConditions>
              <imsss:rollupAction action="incomplete"/>
            </imsss:rollupRule>
          </imsss:rollupRules>
          <imsss:randomizationControls randomizationTiming="onEachNewAttempt" selectCount="1" reorderChildren="true" selectionTiming="once"/>
          <adlseq:constrainedChoiceConsiderations preventActivation="true" constrainChoice="false"/>
          <adlseq:rollupConsiderations requiredForSatisfied="ifNotSkipped" requiredForCompleted="ifAttempted" measureSatisfactionIfActive="false"/>
        </imsss:sequencing>
      </item>
      <imsss:sequencing>
        <imsss:controlMode choice="true" flow="true"/>
      </imsss:sequencing>
    </organization>
  </organizations>
  <resources>
    <resource identifier="res_playing" type="webcontent" adlcp:scormType="sco" href="Playing/Playing.html">
      <file href="Playing/Playing.html"/>
    </resource>
    <resource identifier="res_etiquette" type="webcontent" adlcp:scormType="sco" href="Etiquette/Course.html">
      <file href="Etiquette/Course.html"/>
    </resource>
  </resources>
  <imsss:sequencingCollection>
    <imsss:sequencing ID="content_seq">
      <imsss:controlMode choice="true" flow="true"/>
      <imsss:objectives>
        <imsss:primaryObjective objectiveID="content_completed" satisfiedByMeasure="true"/>
      </imsss:objectives>
      <imsss:deliveryControls completionSetByContent="true" objectiveSetByContent="true"/>
    </imsss:sequencing>
  </imsss:sequencingCollection>
</manifest>`

// SCORM 2004 4th edition: attribute form of completionThreshold, exit rules, adlseq
// objectives extending an imsss objective's maps, a shared data map, the organization's
// sharedDataGlobalToSystem and an empty completionThreshold (all 4th-edition defaults).
const manifest2004v4 = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="ed4" version="1" ` + NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="ORG4">
    <organization identifier="ORG4" adlcp:sharedDataGlobalToSystem="false">
      <title>Safety Induction</title>
      <item identifier="unit1">
        <title>Unit 1</title>
        <item identifier="u1_sco" identifierref="R_U1">
          <title>Hazards</title>
          <adlcp:completionThreshold completedByMeasure="true" minProgressMeasure="0.8" progressWeight="0.5"/>
          <imsss:sequencing>
            <imsss:sequencingRules>
              <imsss:exitConditionRule>
                <imsss:ruleConditions>
                  <imsss:ruleCondition condition="objectiveMeasureGreaterThan" measureThreshold="0.6"/>
                </imsss:ruleConditions>
                <imsss:ruleAction action="exit"/>
              </imsss:exitConditionRule>
            </imsss:sequencingRules>
            <imsss:objectives>
              <imsss:primaryObjective objectiveID="hazards" satisfiedByMeasure="true"/>
            </imsss:objectives>
            <adlseq:objectives>
              <adlseq:objective objectiveID="hazards">
                <adlseq:mapInfo targetObjectiveID="g" readRawScore="false" writeRawScore="true" writeCompletionStatus="true"/>
              </adlseq:objective>
            </adlseq:objectives>
          </imsss:sequencing>
          <adlcp:data><adlcp:map targetID="shared" readSharedData="true" writeSharedData="true"/></adlcp:data>
        </item>
        <item identifier="u1_quiz" identifierref="R_QUIZ" parameters="#question1">
          <title>Quiz</title>
          <adlcp:completionThreshold/>
        </item>
      </item>
      <item identifier="unit2" identifierref="R_U2">
        <title>Unit 2</title>
        <adlcp:completionThreshold minProgressMeasure="0.6"/>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="R_U1" type="webcontent" adlcp:scormType="sco" href="u1/index.html"><file href="u1/index.html"/></resource>
    <resource identifier="R_QUIZ" type="webcontent" adlcp:scormType="sco" href="u1/quiz.html"><file href="u1/quiz.html"/></resource>
    <resource identifier="R_U2" type="webcontent" adlcp:scormType="sco" href="u2/index.html"><file href="u2/index.html"/></resource>
  </resources>
</manifest>`

// xml:base on all three levels, each relative to the one before, plus item parameters in
// their various spellings, an absolute URL resource and a base that climbs with "..".
const manifestXMLBase = `<?xml version="1.0"?>
<manifest identifier="xmlbase" ` + NS2004 + ` xml:base="content/">
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="O">
    <organization identifier="O">
      <title>Bases</title>
      <item identifier="plain" identifierref="R_plain"><title>plain</title></item>
      <item identifier="q" identifierref="R_plain" parameters="?a=1&amp;b=2"><title>query</title></item>
      <item identifier="amp" identifierref="R_query" parameters="&amp;c=3"><title>join</title></item>
      <item identifier="hash" identifierref="R_plain" parameters="#page5"><title>fragment</title></item>
      <item identifier="hash2" identifierref="R_frag" parameters="#other"><title>fragment kept</title></item>
      <item identifier="qfrag" identifierref="R_frag" parameters="x=1"><title>query before fragment</title></item>
      <item identifier="up" identifierref="R_up"><title>dot segments</title></item>
      <item identifier="abs" identifierref="R_abs" parameters="lang=fr"><title>absolute</title></item>
      <item identifier="absbase" identifierref="R_absbase"><title>absolute base</title></item>
      <item identifier="rooted" identifierref="R_rooted"><title>rooted</title></item>
    </organization>
  </organizations>
  <resources xml:base="modules/">
    <resource identifier="R_plain" type="webcontent" adlcp:scormType="sco" xml:base="m1/" href="start.html">
      <file href="start.html"/>
    </resource>
    <resource identifier="R_query" type="webcontent" adlcp:scormType="sco" xml:base="m2/" href="start.html?lang=en">
      <file href="start.html"/>
    </resource>
    <resource identifier="R_frag" type="webcontent" adlcp:scormType="sco" href="m3/page.html#intro">
      <file href="m3/page.html"/>
    </resource>
    <resource identifier="R_up" type="webcontent" adlcp:scormType="sco" xml:base="./m4/../m5/" href="./sub/../launch.html">
      <file href="launch.html"/>
    </resource>
    <resource identifier="R_abs" type="webcontent" adlcp:scormType="asset" href="https://cdn.example.com/video/player.html?id=7"/>
    <resource identifier="R_absbase" type="webcontent" adlcp:scormType="asset" xml:base="https://cdn.example.com/course/" href="../shared/index.html"/>
    <resource identifier="R_rooted" type="webcontent" adlcp:scormType="asset" href="/top.html">
      <file href="/top.html"/>
    </resource>
  </resources>
</manifest>`

// Several organizations; the default is the second one.
const manifestMultiOrg = `<?xml version="1.0"?>
<manifest identifier="multiorg" ` + NS12 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="full">
    <organization identifier="short">
      <title>Short Path</title>
      <item identifier="s1" identifierref="r1"><title>Summary</title></item>
    </organization>
    <organization identifier="full">
      <title>Full Path</title>
      <item identifier="f1" identifierref="r1"><title>Summary</title></item>
      <item identifier="f2" identifierref="r2"><title>Details</title></item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="summary.html"><file href="summary.html"/></resource>
    <resource identifier="r2" type="webcontent" adlcp:scormtype="sco" href="details.html"><file href="details.html"/></resource>
  </resources>
</manifest>`

// Items nested four levels deep under the organization.
const manifestNested = `<?xml version="1.0"?>
<manifest identifier="nested" ` + NS12 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>1.2</schemaversion></metadata>
  <organizations default="root">
    <organization identifier="root">
      <title>Deep Course</title>
      <item identifier="part1">
        <title>Part 1</title>
        <item identifier="ch1">
          <title>Chapter 1</title>
          <item identifier="sec1">
            <title>Section 1</title>
            <item identifier="sco1" identifierref="r1"><title>Page 1</title></item>
            <item identifier="sco2" identifierref="r2"><title>Page 2</title></item>
          </item>
        </item>
        <item identifier="ch2" identifierref="r2"><title>Chapter 2</title></item>
      </item>
      <item identifier="part2"><title>Part 2</title>
        <item identifier="sco3" identifierref="r1" parameters="page=3"><title>Page 3</title></item>
      </item>
    </organization>
  </organizations>
  <resources>
    <resource identifier="r1" type="webcontent" adlcp:scormtype="sco" href="p.html"><file href="p.html"/></resource>
    <resource identifier="r2" type="webcontent" adlcp:scormtype="sco" href="q.html"><file href="q.html"/></resource>
  </resources>
</manifest>`

// SCORM 2004 namespaces with an unknown schemaversion, a default pointing nowhere and
// macOS junk in the package.
const manifestOddities = `<?xml version="1.0"?>
<manifest identifier="odd" ` + NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 5th Edition</schemaversion></metadata>
  <organizations default="nowhere">
    <organization identifier="first">
      <item identifier="a" identifierref="ra"><title>A</title>
        <imsss:sequencing>
          <adlseq:objectives>
            <adlseq:objective objectiveID="nowhere"><adlseq:mapInfo targetObjectiveID="g"/></adlseq:objective>
          </adlseq:objectives>
        </imsss:sequencing>
        <adlcp:data><adlcp:map readSharedData="false"/></adlcp:data>
      </item>
      <item identifier="b"/>
    </organization>
  </organizations>
  <resources>
    <resource identifier="ra" type="webcontent" adlcp:scormType="sco" href="a.html"><file href="a.html"/></resource>
    <resource identifier="rb" type="webcontent" href="missing.html"/>
  </resources>
</manifest>`

// SCORM 2004 4th edition with items nested three deep (organization > part > topic > SCO),
// both forms of completionThreshold side by side (the 3rd edition text value and the 4th
// edition attributes), pre/post/exit condition rules, primary and secondary objectives with
// global maps, and sequencing on every level.
const scorm2004Deep = `<?xml version="1.0" encoding="UTF-8"?>
<manifest identifier="com.example.deep2004" version="3" ` + NS2004 + `>
  <metadata><schema>ADL SCORM</schema><schemaversion>2004 4th Edition</schemaversion></metadata>
  <organizations default="ORG_DEEP">
    <organization identifier="ORG_DEEP">
      <title>Chemistry Lab</title>
      <item identifier="part1">
        <title>Part 1: Safety</title>
        <item identifier="topic_a">
          <title>Topic A: Goggles</title>
          <item identifier="sco_a1" identifierref="R_A1">
            <title>Why goggles</title>
            <adlcp:completionThreshold>0.4</adlcp:completionThreshold>
            <imsss:sequencing>
              <imsss:sequencingRules>
                <imsss:preConditionRule>
                  <imsss:ruleConditions>
                    <imsss:ruleCondition condition="satisfied"/>
                  </imsss:ruleConditions>
                  <imsss:ruleAction action="skip"/>
                </imsss:preConditionRule>
              </imsss:sequencingRules>
              <imsss:objectives>
                <imsss:primaryObjective objectiveID="goggles_known" satisfiedByMeasure="true">
                  <imsss:minNormalizedMeasure>0.7</imsss:minNormalizedMeasure>
                  <imsss:mapInfo targetObjectiveID="com.example.lab.goggles" readSatisfiedStatus="true" writeSatisfiedStatus="true"/>
                </imsss:primaryObjective>
                <imsss:objective objectiveID="goggles_fit">
                  <imsss:mapInfo targetObjectiveID="com.example.lab.fit" readNormalizedMeasure="false" writeNormalizedMeasure="true"/>
                </imsss:objective>
              </imsss:objectives>
            </imsss:sequencing>
          </item>
          <item identifier="sco_a2" identifierref="R_A2">
            <title>Wearing goggles</title>
            <adlcp:completionThreshold completedByMeasure="true" minProgressMeasure="0.9" progressWeight="0.25"/>
            <imsss:sequencing>
              <imsss:sequencingRules>
                <imsss:postConditionRule>
                  <imsss:ruleConditions conditionCombination="all">
                    <imsss:ruleCondition operator="not" condition="satisfied"/>
                    <imsss:ruleCondition condition="attemptLimitExceeded" operator="not"/>
                  </imsss:ruleConditions>
                  <imsss:ruleAction action="retry"/>
                </imsss:postConditionRule>
              </imsss:sequencingRules>
              <imsss:limitConditions attemptLimit="2"/>
            </imsss:sequencing>
          </item>
          <imsss:sequencing>
            <imsss:controlMode choice="true" flow="true" forwardOnly="true"/>
          </imsss:sequencing>
        </item>
        <item identifier="topic_b">
          <title>Topic B: Spills</title>
          <item identifier="sco_b1" identifierref="R_B1" parameters="?step=2">
            <title>Cleaning a spill</title>
            <imsss:sequencing>
              <imsss:sequencingRules>
                <imsss:exitConditionRule>
                  <imsss:ruleConditions>
                    <imsss:ruleCondition condition="completed"/>
                  </imsss:ruleConditions>
                  <imsss:ruleAction action="exit"/>
                </imsss:exitConditionRule>
              </imsss:sequencingRules>
              <imsss:objectives>
                <imsss:primaryObjective objectiveID="spills" satisfiedByMeasure="true"/>
              </imsss:objectives>
            </imsss:sequencing>
          </item>
        </item>
        <imsss:sequencing>
          <imsss:controlMode choice="false" flow="true"/>
        </imsss:sequencing>
      </item>
      <item identifier="final" identifierref="R_FINAL" isvisible="false">
        <title>Lab sign-off</title>
        <adlcp:completionThreshold minProgressMeasure="0.5"/>
      </item>
      <imsss:sequencing>
        <imsss:controlMode choice="true" flow="true"/>
      </imsss:sequencing>
    </organization>
  </organizations>
  <resources>
    <resource identifier="R_A1" type="webcontent" adlcp:scormType="sco" href="part1/a/why.html"><file href="part1/a/why.html"/></resource>
    <resource identifier="R_A2" type="webcontent" adlcp:scormType="sco" href="part1/a/wear.html"><file href="part1/a/wear.html"/></resource>
    <resource identifier="R_B1" type="webcontent" adlcp:scormType="sco" href="part1/b/spill.html"><file href="part1/b/spill.html"/></resource>
    <resource identifier="R_FINAL" type="webcontent" adlcp:scormType="asset" href="signoff.html"><file href="signoff.html"/></resource>
  </resources>
</manifest>`
