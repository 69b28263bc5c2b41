package mappings

// EnglishStopWords is the English stop list: the 127 words of PostgreSQL's
// tsearch_data/english.stop (derived from the Snowball English list), in its order: the
// words mappings/analysis drops from keyword search and puts a placeholder for in phrase
// search, for both search backends. The words are lower case; contractions appear split at
// the apostrophe ("don", "t", "s"), as the analysis splits words there.
// Treat it as read-only.
var EnglishStopWords = []string{
	"i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours",
	"yourself", "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself",
	"it", "its", "itself", "they", "them", "their", "theirs", "themselves", "what", "which",
	"who", "whom", "this", "that", "these", "those", "am", "is", "are", "was", "were", "be",
	"been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an",
	"the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for",
	"with", "about", "against", "between", "into", "through", "during", "before", "after",
	"above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under",
	"again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all",
	"any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not",
	"only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don",
	"should", "now",
}
