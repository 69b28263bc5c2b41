package lexical

import "strings"

// grandfathered are the RFC 5646 tags that are well-formed only by being listed.
var grandfathered = map[string]bool{
	"en-gb-oed": true, "i-ami": true, "i-bnn": true, "i-default": true, "i-enochian": true,
	"i-hak": true, "i-klingon": true, "i-lux": true, "i-mingo": true, "i-navajo": true,
	"i-pwn": true, "i-tao": true, "i-tay": true, "i-tsu": true, "sgn-be-fr": true,
	"sgn-be-nl": true, "sgn-ch-de": true, "art-lojban": true, "cel-gaulish": true,
	"no-bok": true, "no-nyn": true, "zh-guoyu": true, "zh-hakka": true, "zh-min": true,
	"zh-min-nan": true, "zh-xiang": true,
}

func isAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i] | 0x20
		if c < 'a' || c > 'z' {
			return false
		}
	}
	return s != ""
}

func isDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isAlnum(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= '0' && c <= '9') && !((c|0x20) >= 'a' && (c|0x20) <= 'z') {
			return false
		}
	}
	return s != ""
}

// ValidLanguageTag reports whether s is a well-formed RFC 5646 language tag (the syntax,
// plus the rule that variants and extension singletons are not repeated; the registry is
// not consulted, as xAPI only requires well-formedness).
func ValidLanguageTag(s string) bool {
	lower := strings.ToLower(s)
	if grandfathered[lower] {
		return true
	}
	parts := strings.Split(lower, "-")
	for _, p := range parts {
		if p == "" || len(p) > 8 || !isAlnum(p) {
			return false
		}
	}
	i := 0
	if parts[0] == "x" {
		return privateUse(parts[1:])
	}
	// language
	lang := parts[0]
	if !isAlpha(lang) || len(lang) < 2 {
		return false
	}
	i = 1
	if len(lang) <= 3 {
		// up to three extlang subtags
		for n := 0; n < 3 && i < len(parts) && len(parts[i]) == 3 && isAlpha(parts[i]); n++ {
			i++
		}
	}
	// script
	if i < len(parts) && len(parts[i]) == 4 && isAlpha(parts[i]) {
		i++
	}
	// region
	if i < len(parts) && ((len(parts[i]) == 2 && isAlpha(parts[i])) || (len(parts[i]) == 3 && isDigit(parts[i]))) {
		i++
	}
	// variants
	seen := map[string]bool{}
	for i < len(parts) {
		p := parts[i]
		if (len(p) >= 5 && len(p) <= 8) || (len(p) == 4 && p[0] >= '0' && p[0] <= '9') {
			if seen[p] {
				return false
			}
			seen[p] = true
			i++
			continue
		}
		break
	}
	// extensions
	singletons := map[string]bool{}
	for i < len(parts) && len(parts[i]) == 1 && parts[i] != "x" {
		if singletons[parts[i]] {
			return false
		}
		singletons[parts[i]] = true
		i++
		n := 0
		for i < len(parts) && len(parts[i]) >= 2 {
			i++
			n++
		}
		if n == 0 {
			return false
		}
	}
	if i < len(parts) && parts[i] == "x" {
		return privateUse(parts[i+1:])
	}
	return i == len(parts)
}

func privateUse(parts []string) bool {
	return len(parts) > 0 // each already checked to be 1-8 alphanumerics
}
