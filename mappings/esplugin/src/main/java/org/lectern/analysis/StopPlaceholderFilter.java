package org.lectern.analysis;

import java.io.IOException;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.KeywordAttribute;

/**
 * Replaces every stop word with a placeholder token, keeping its position and offsets, so that
 * a phrase query can require "some stop word here" without caring which one: {@code management
 * of change} and {@code management for change} both index as {@code management _STOP_ change}.
 *
 * <p>The placeholder is marked as a keyword, so stemmers that follow (such as
 * {@code lectern_porter2}) leave it alone. Put this filter after {@code lowercase}: the stop
 * list is matched exactly. This is the Elasticsearch side of Go's
 * {@code mappings/analysis.PhraseTerms}.
 */
public final class StopPlaceholderFilter extends TokenFilter {

    private final CharTermAttribute termAtt = addAttribute(CharTermAttribute.class);
    private final KeywordAttribute keywordAtt = addAttribute(KeywordAttribute.class);
    private final CharArraySet stopWords;
    private final String placeholder;

    /** Wraps {@code input}, replacing the words of {@code stopWords} with {@code placeholder}. */
    public StopPlaceholderFilter(TokenStream input, CharArraySet stopWords, String placeholder) {
        super(input);
        this.stopWords = stopWords;
        this.placeholder = placeholder;
    }

    @Override
    public boolean incrementToken() throws IOException {
        if (!input.incrementToken()) {
            return false;
        }
        if (stopWords.contains(termAtt.buffer(), 0, termAtt.length())) {
            termAtt.setEmpty().append(placeholder);
            keywordAtt.setKeyword(true);
        }
        return true;
    }
}
