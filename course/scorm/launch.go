package scorm

import (
	"net/url"
	"strings"
)

// isAbsURL reports whether ref is an absolute URL (scheme or protocol-relative). One-letter
// schemes are not accepted because "C:/course/index.html" written by Windows tools is a
// broken path, not a URL.
func isAbsURL(ref string) bool {
	if strings.HasPrefix(ref, "//") {
		return true
	}
	i := strings.Index(ref, ":")
	if i < 2 {
		return false
	}
	for j, c := range ref[:i] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	return true
}

// splitRef splits a URI reference into its path and the "?query#fragment" tail.
func splitRef(ref string) (p, tail string) {
	if i := strings.IndexAny(ref, "?#"); i >= 0 {
		return ref[:i], ref[i:]
	}
	return ref, ""
}

// cleanRel removes dot segments and empty segments from a package-relative path. It reports
// whether ".." tried to climb above the package root; the segment is dropped, which keeps the
// result inside the package (as RFC 3986 does for the authority root) while letting the
// caller warn. A trailing slash is kept because it marks a directory (an xml:base).
func cleanRel(p string) (string, bool) {
	escaped := false
	trailing := strings.HasSuffix(p, "/")
	var out []string
	for _, seg := range strings.Split(p, "/") {
		switch dotSegment(seg) {
		case "", ".":
		case "..":
			if len(out) == 0 {
				escaped = true
			} else {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, seg)
		}
	}
	s := strings.Join(out, "/")
	if trailing && s != "" {
		s += "/"
	}
	return s, escaped
}

// dotSegment maps percent-encoded dot segments ("%2e%2e", ".%2E") to "." and "..": browsers
// treat them as dot segments (WHATWG URL), so leaving them encoded would let a launch URL
// climb out of the package once it is joined to the content base URL.
func dotSegment(seg string) string {
	if len(seg) > 6 || !strings.Contains(seg, "%") {
		return seg
	}
	switch d := strings.ReplaceAll(strings.ToLower(seg), "%2e", "."); d {
	case ".", "..":
		return d
	}
	return seg
}

// resolveRef resolves ref against base, where base is "" (the package root), a
// package-relative directory ending in "/", or an absolute URL. Relative results are
// package-relative without a leading slash; a leading "/" in ref means the package root
// because a package has no other root to refer to. escaped reports a ".." above the root.
func resolveRef(base, ref string) (res string, escaped bool) {
	ref = strings.TrimSpace(ref)
	if isAbsURL(ref) {
		return ref, false
	}
	if isAbsURL(base) {
		b, err1 := url.Parse(base)
		r, err2 := url.Parse(ref)
		if err1 == nil && err2 == nil {
			return b.ResolveReference(r).String(), false
		}
		return strings.TrimSuffix(base, "/") + "/" + strings.TrimPrefix(ref, "/"), false
	}
	p, tail := splitRef(ref)
	if p == "" {
		// "?x" or "#y" alone refer to the base document itself.
		c, esc := cleanRel(base)
		return c + tail, esc
	}
	full := p
	if !strings.HasPrefix(p, "/") {
		full = base + p
	}
	c, esc := cleanRel(full)
	return c + tail, esc
}

// applyParameters appends an item's parameters attribute to a launch URL following the
// SCORM CAM algorithm: leading '?' and '&' are ignored; parameters starting with '#' are a
// fragment, appended only when the URL has none; otherwise they join an existing query with
// '&' or start one with '?'. Unlike a literal string append, the query is inserted before an
// existing fragment so the URL stays well formed ("a.html#p" + "x=1" → "a.html?x=1#p").
func applyParameters(u, params string) string {
	params = strings.TrimSpace(params)
	params = strings.TrimLeft(params, "?&")
	if params == "" {
		return u
	}
	if strings.HasPrefix(params, "#") {
		if strings.Contains(u, "#") {
			return u
		}
		return u + params
	}
	base, frag := u, ""
	if i := strings.Index(u, "#"); i >= 0 {
		base, frag = u[:i], u[i:]
	}
	pq, pfrag := params, ""
	if i := strings.Index(params, "#"); i >= 0 {
		pq, pfrag = params[:i], params[i:]
	}
	if frag == "" {
		frag = pfrag
	}
	switch {
	case pq == "":
	case strings.HasSuffix(base, "?") || strings.HasSuffix(base, "&"):
		base += pq
	case strings.Contains(base, "?"):
		base += "&" + pq
	default:
		base += "?" + pq
	}
	return base + frag
}

// filePath turns a package-relative URI reference into the file system path it names:
// query and fragment dropped, percent-escapes decoded ("my%20page.html" is "my page.html").
func filePath(ref string) string {
	p, _ := splitRef(ref)
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	p, _ = cleanRel(p)
	return strings.TrimSuffix(p, "/")
}
