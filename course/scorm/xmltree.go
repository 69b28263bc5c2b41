package scorm

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits applied to every XML document the parser reads (the manifest and external metadata).
// They exist because packages are untrusted uploads: a manifest is a few kilobytes to a few
// hundred kilobytes in practice, so these bounds only ever stop hostile or broken input.
const (
	// MaxManifestBytes caps the size of imsmanifest.xml and of external metadata files.
	MaxManifestBytes = 10 << 20
	// MaxDepth caps element nesting; real manifests nest items a handful of levels deep.
	MaxDepth = 200
)

const xmlNS = "http://www.w3.org/XML/1998/namespace"

// node is a minimal DOM element. The manifest is read into a tree first because SCORM
// resolves references forwards (items name resources and sequencing collections that come
// later in the document), so a streaming parse would need the same bookkeeping anyway.
type node struct {
	name     xml.Name
	attrs    []xml.Attr
	children []*node
	text     string // concatenated character data directly inside the element
}

// xmlDoc is a parsed document with the namespace URIs it declares, which standard detection
// looks at even when the elements themselves carry unexpected prefixes.
type xmlDoc struct {
	root       *node
	namespaces []string
}

// errXML marks document-level problems so callers can name the file in the message.
var errXML = errors.New("xml")

// parseXML reads a whole document into a tree, refusing entity declarations and excessive
// nesting. encoding/xml never fetches external entities, but a DOCTYPE that declares
// entities is still refused outright: it has no legitimate use in a manifest and refusing it
// closes the door on entity-expansion tricks should the decoder ever learn to expand them.
func parseXML(data []byte) (*xmlDoc, error) {
	data, err := toUTF8(data)
	if err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	dec.CharsetReader = charsetReader
	doc := &xmlDoc{}
	var stack []*node
	var text [][]byte // character data per open element
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errXML, err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			d := strings.ToUpper(string(t))
			if strings.HasPrefix(strings.TrimSpace(d), "DOCTYPE") && strings.Contains(d, "ENTITY") {
				return nil, fmt.Errorf("%w: DOCTYPE declares entities; entity declarations are refused (XXE / entity expansion)", errXML)
			}
			if strings.Contains(d, "ENTITY") {
				return nil, fmt.Errorf("%w: entity declarations are refused (XXE / entity expansion)", errXML)
			}
		case xml.StartElement:
			if len(stack) >= MaxDepth {
				return nil, fmt.Errorf("%w: elements nested deeper than %d levels", errXML, MaxDepth)
			}
			n := &node{name: t.Name, attrs: append([]xml.Attr(nil), t.Attr...)}
			for _, a := range t.Attr {
				if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
					doc.namespaces = append(doc.namespaces, strings.TrimSpace(a.Value))
				}
			}
			if len(stack) == 0 {
				if doc.root != nil {
					return nil, fmt.Errorf("%w: more than one root element", errXML)
				}
				doc.root = n
			} else {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			}
			stack = append(stack, n)
			text = append(text, nil)
		case xml.EndElement:
			// Strict mode guarantees balance, so the stack is never empty here.
			n := stack[len(stack)-1]
			n.text = string(text[len(text)-1])
			stack = stack[:len(stack)-1]
			text = text[:len(text)-1]
		case xml.CharData:
			if len(text) > 0 {
				text[len(text)-1] = append(text[len(text)-1], t...)
			}
		}
	}
	if doc.root == nil {
		return nil, fmt.Errorf("%w: no root element", errXML)
	}
	return doc, nil
}

// toUTF8 strips a UTF-8 byte order mark and converts UTF-16 (recognised by its BOM) to UTF-8;
// Windows authoring tools still write UTF-16 manifests and encoding/xml reads only UTF-8.
func toUTF8(data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		return data[3:], nil
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE}), bytes.HasPrefix(data, []byte{0xFE, 0xFF}):
		le := data[0] == 0xFF
		body := data[2:]
		if len(body)%2 == 1 {
			return nil, fmt.Errorf("%w: truncated UTF-16 text", errXML)
		}
		u := make([]uint16, len(body)/2)
		for i := range u {
			if le {
				u[i] = uint16(body[2*i]) | uint16(body[2*i+1])<<8
			} else {
				u[i] = uint16(body[2*i])<<8 | uint16(body[2*i+1])
			}
		}
		var b bytes.Buffer
		for _, r := range utf16.Decode(u) {
			b.WriteRune(r)
		}
		return b.Bytes(), nil
	}
	return data, nil
}

// charsetReader supports the encodings manifests are found in. UTF-16 input was already
// converted by toUTF8, so its label passes through unchanged.
func charsetReader(label string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "utf-8", "utf8", "us-ascii", "ascii", "utf-16", "utf-16le", "utf-16be", "utf16":
		return input, nil
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "l1", "windows-1252", "cp1252":
		// windows-1252 differs from Latin-1 only in 0x80-0x9F (typographic quotes and the
		// like); mapping those bytes as Latin-1 keeps the text readable enough for titles.
		b, err := io.ReadAll(input)
		if err != nil {
			return nil, err
		}
		out := make([]byte, 0, len(b)+len(b)/4)
		for _, c := range b {
			out = utf8.AppendRune(out, rune(c))
		}
		return bytes.NewReader(out), nil
	}
	return nil, fmt.Errorf("unsupported character encoding %q", label)
}

// is reports whether the element's local name is local, ignoring case: SCORM 1.2 spells the
// adlcp elements in lower case (datafromlms) and SCORM 2004 in camel case (dataFromLMS), and
// authoring tools mix them up, so matching is deliberately lenient.
func (n *node) is(local string) bool {
	return strings.EqualFold(n.name.Local, local)
}

// inNS reports whether the element's namespace URI (or undeclared prefix) mentions family,
// e.g. "adlseq" or "imsss"; used only where two vocabularies share a local name.
func (n *node) inNS(family string) bool {
	return strings.Contains(strings.ToLower(n.name.Space), family)
}

// child returns the first child element with the local name.
func (n *node) child(local string) *node {
	for _, c := range n.children {
		if c.is(local) {
			return c
		}
	}
	return nil
}

// all returns the child elements with the local name, in document order.
func (n *node) all(local string) []*node {
	var out []*node
	for _, c := range n.children {
		if c.is(local) {
			out = append(out, c)
		}
	}
	return out
}

// attr returns an attribute's value by local name (namespace and case ignored, namespace
// declarations skipped) and whether it is present.
func (n *node) attr(local string) (string, bool) {
	for _, a := range n.attrs {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") || a.Name.Space == xmlNS {
			continue
		}
		if strings.EqualFold(a.Name.Local, local) {
			return a.Value, true
		}
	}
	return "", false
}

// attrS returns the trimmed attribute value or "".
func (n *node) attrS(local string) string {
	v, _ := n.attr(local)
	return strings.TrimSpace(v)
}

// attrID returns an identifier attribute of type anyURI (objectiveID, targetObjectiveID,
// referencedObjective) as SCORM 2004 compares it: encoded spaces (%20) decoded, leading and
// trailing whitespace removed and inner runs of whitespace collapsed to one space. ADL's
// reference LMS does the same (its decodeHandler.processWhitespace), and its test packages
// rely on it (OB-02a's referencedObjective "  %20obj%20%201%20  " names objective
// "obj%201"; a SCO sees OB-12a's " ob%20j%201     " as "ob j 1").
func (n *node) attrID(local string) string {
	v, _ := n.attr(local)
	return collapseID(v)
}

// collapseID is attrID's normalization of a value.
func collapseID(v string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(v, "%20", " ")), " ")
}

// xmlBase returns the element's xml:base attribute.
func (n *node) xmlBase() string {
	for _, a := range n.attrs {
		if (a.Name.Space == xmlNS || a.Name.Space == "xml") && a.Name.Local == "base" {
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// textOf returns the trimmed text of a child element, or "" when absent.
func (n *node) textOf(local string) string {
	if c := n.child(local); c != nil {
		return strings.TrimSpace(c.text)
	}
	return ""
}
