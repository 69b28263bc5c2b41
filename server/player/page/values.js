// The SCORM 2004 run-time's own checks of what a SCO reads and sets, for the cases where
// scorm-again 3.4.3 answers otherwise than the RTE book (ADL DMI, docs/scorm-again.md). They
// take values and element names only, no DOM and no API object, so that node can test them
// (values_test.js) apart from the browser; scorm2004.js applies them in front of
// scorm-again's GetValue and SetValue.
var scorm2004Values = (function () {
  "use strict";
  var collections = /^cmi\.(objectives|interactions|comments_from_learner|comments_from_lms)\.([^.]*)\.(.+)$/;
  var nested = /^(objectives|correct_responses)\.([^.]*)\.(.+)$/;
  var canonicalIndex = /^(0|[1-9]\d*)$/;
  // RTE 4.1.1.6 (long_identifier_type): a URI, so no spaces, and a URN has its NID and NSS.
  function identifier(v) {
    if (v === "" || /\s/.test(v)) return false;
    return !/^urn:/i.test(v) || /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:\S+$/i.test(v);
  }
  // RTE 4.1.1.7 (time (second,10,0)): YYYY[-MM[-DD[Thh[:mm[:ss[.s[TZD]]]]]]], years
  // 1970-2038, at most two decimals of a second. The time zone (Z, +hh, +hh:mm) comes only
  // after the fraction, as the format nests it: ADL DMI expects 406 for
  // "2004-04-01T09:45:58Z", which scorm-again 3.4.3 refused anyway, so this check no longer
  // leaves it to scorm-again.
  var timeRE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.\d{1,2}(?:Z|[+-](\d{2})(?::(\d{2}))?)?)?)?)?)?)?)?$/;
  function time(v) {
    var m = timeRE.exec(v);
    if (!m) return false;
    var y = +m[1], mo = m[2] ? +m[2] : 1, d = m[3] ? +m[3] : 1;
    return y >= 1970 && y <= 2038 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31 &&
      (!m[4] || +m[4] < 24) && (!m[5] || +m[5] < 60) && (!m[6] || +m[6] < 60) &&
      (!m[7] || +m[7] < 24) && (!m[8] || +m[8] < 60);
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
  // collectionError answers the RTE's error for el's collection index: 301 (GetValue) or 351
  // (SetValue) for an index past the end, 408 for a new entry that does not start with its
  // id (RTE 4.1.7: an objective or interaction is created by its id); 0 when none applies.
  // count(collection) is how many entries the collection ("cmi.interactions",
  // "cmi.interactions.0.objectives") holds now.
  function collectionError(el, setting, count) {
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
  // element reports whether v is a valid value of el by el's data type, for the elements
  // whose type scorm-again checks otherwise; true for the others (scorm-again checks them).
  function element(el, v) {
    if (/^cmi\.(objectives\.\d+\.id|interactions\.\d+\.id|interactions\.\d+\.objectives\.\d+\.id)$/.test(el)) return identifier(v);
    if (/^cmi\.(comments_from_learner|interactions)\.\d+\.timestamp$/.test(el)) return time(v);
    if (/^cmi\.(session_time|interactions\.\d+\.latency)$/.test(el)) return duration(v);
    if (el === "cmi.learner_preference.language") return v === "" || lang(v);
    // A localized_string_type's {lang=...} names a language_type (RTE 4.1.1.7).
    var m = /^\{lang=([^}]*)\}/.exec(v);
    if (m && /^cmi\.(comments_from_learner\.\d+\.comment|objectives\.\d+\.description|interactions\.\d+\.description)$/.test(el)) return lang(m[1]);
    return true;
  }
  // RTE 4.2.9.1: these types have a single correct response.
  function singleCorrectResponse(type) { return /^(true-false|likert|numeric|other)$/.test(type); }
  return {
    collectionError: collectionError, element: element, response: response, singleCorrectResponse: singleCorrectResponse,
    blankable: function (el) { return blankable.test(el); }, placeholder: function (type) { return placeholders[type] || "lectern"; },
    identifier: identifier, time: time, duration: duration, uri: uri, lang: lang, number: number, range: range
  };
})();
