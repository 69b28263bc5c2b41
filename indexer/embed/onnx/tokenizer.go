package onnx

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// wordPiece is a BERT tokenizer: BertNormalizer (clean text, pad CJK
// characters, strip accents, lowercase) + BertPreTokenizer (split on
// whitespace and punctuation) + greedy longest-match WordPiece, matching the
// tokenizer.json shipped with all-MiniLM-L6-v2 (Hugging Face `tokenizers`).
//
// It is written here rather than taken from a library because it is ~200
// lines, has to match the reference byte for byte (the tests compare ids with
// the Hugging Face implementation), and avoids a dependency tree for it.
// Known, accepted divergence: Go's Unicode tables are newer than those in
// Hugging Face's Rust crate, so a few code points assigned or recategorised
// in recent Unicode versions (e.g. U+061D, U+0890) split differently. A fuzz
// run over 3,000 random strings drawn from exotic blocks differed on 16, all
// for such code points; ordinary text in any script matches.
//
// It is immutable after construction and therefore safe for concurrent use.
type wordPiece struct {
	vocab     map[string]int32
	lowercase bool
	maxTokens int // including [CLS] and [SEP]
	cls, sep  int32
	pad, unk  int32
	// piece marks the ids of word continuations ("##ing"): a phrase found in a text's
	// ids must not end inside a word (EmbedInContext).
	piece []bool
}

// maxWordChars mirrors BERT's max_input_chars_per_word: longer "words" (URLs,
// base64, long numbers) become a single [UNK] instead of hundreds of pieces.
const maxWordChars = 100

func loadWordPiece(vocabPath string, lowercase bool, maxTokens int) (*wordPiece, error) {
	f, err := os.Open(vocabPath)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	vocab := make(map[string]int32, 32000)
	sc := bufio.NewScanner(f)
	var id int32
	for sc.Scan() {
		// The line number is the id; duplicates keep the first id, as in
		// Hugging Face's loader.
		tok := strings.TrimRight(sc.Text(), "\r")
		if _, dup := vocab[tok]; !dup {
			vocab[tok] = id
		}
		id++
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", vocabPath, err)
	}
	w := &wordPiece{vocab: vocab, lowercase: lowercase, maxTokens: maxTokens, piece: make([]bool, id)}
	for tok, i := range vocab {
		w.piece[i] = strings.HasPrefix(tok, "##")
	}
	for _, s := range []struct {
		name string
		dst  *int32
	}{{"[CLS]", &w.cls}, {"[SEP]", &w.sep}, {"[PAD]", &w.pad}, {"[UNK]", &w.unk}} {
		v, ok := vocab[s.name]
		if !ok {
			return nil, fmt.Errorf("%s: special token %s missing: not a BERT WordPiece vocabulary", vocabPath, s.name)
		}
		*s.dst = v
	}
	if maxTokens < 3 {
		return nil, fmt.Errorf("max tokens %d too small", maxTokens)
	}
	return w, nil
}

// encode returns [CLS] pieces... [SEP], truncated to maxTokens. It stops
// tokenizing once the budget is spent, so a 50 kB chunk costs no more than a
// 2 kB one.
func (w *wordPiece) encode(text string) []int32 {
	budget := w.maxTokens - 2
	ids := make([]int32, 0, min(budget, len(text)/3+8)+2)
	ids = append(ids, w.cls)
	for _, word := range w.preTokenize(w.normalize(text)) {
		if len(ids)-1 >= budget {
			break
		}
		ids = w.appendWord(ids, word, budget+1)
	}
	return append(ids, w.sep)
}

// normalize implements BertNormalizer with clean_text, handle_chinese_chars,
// strip_accents (implied by lowercase when unset, as in all-MiniLM-L6-v2) and
// lowercase, in that order.
func (w *wordPiece) normalize(text string) string {
	var b strings.Builder
	b.Grow(len(text) + 8)
	for _, r := range text {
		switch {
		case r == 0 || r == utf8.RuneError || isControl(r):
			// dropped
		case isWhitespace(r):
			b.WriteByte(' ')
		case isChineseChar(r):
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if !w.lowercase {
		return s
	}
	// Strip accents: decompose, then drop nonspacing marks (category Mn).
	s = norm.NFD.String(s)
	b.Reset()
	b.Grow(len(s))
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(r)
	}
	return strings.ToLower(b.String())
}

// preTokenize splits on whitespace and isolates every punctuation character,
// like BertPreTokenizer.
func (w *wordPiece) preTokenize(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case isWhitespace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isPunctuation(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, s[i:i+utf8.RuneLen(r)])
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// appendWord appends the WordPiece ids of one word, never growing ids past
// limit. A word that cannot be fully covered by the vocabulary becomes one
// [UNK], as in BERT.
func (w *wordPiece) appendWord(ids []int32, word string, limit int) []int32 {
	if utf8.RuneCountInString(word) > maxWordChars {
		return append(ids, w.unk)
	}
	mark := len(ids)
	var key strings.Builder
	for start := 0; start < len(word); {
		end := len(word)
		found := int32(-1)
		for end > start {
			key.Reset()
			if start > 0 {
				key.WriteString("##")
			}
			key.WriteString(word[start:end])
			if id, ok := w.vocab[key.String()]; ok {
				found = id
				break
			}
			// Step back one rune, not one byte, so keys stay valid UTF-8.
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			return append(ids[:mark], w.unk)
		}
		ids = append(ids, found)
		start = end
	}
	if len(ids) > limit {
		ids = ids[:limit]
	}
	return ids
}

// isWhitespace follows BERT: \t \n \r and Unicode White_Space.
func isWhitespace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\r':
		return true
	}
	return unicode.IsSpace(r)
}

// isControl follows BERT: categories Cc, Cf, Co, Cs except \t \n \r (which
// count as whitespace). Unassigned code points are kept (and become [UNK]),
// as Hugging Face's implementation does.
func isControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs)
}

// isPunctuation follows BERT: all ASCII non-alphanumeric printable characters
// (so "$", "+", "^" split although Unicode calls them symbols) and Unicode P*.
func isPunctuation(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// isChineseChar is BERT's CJK Unified Ideographs test; these get spaces around
// them because the vocabulary has one token per ideograph.
func isChineseChar(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}
