package org.lectern.analysis;

import org.apache.lucene.analysis.TokenStream;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;

/**
 * The {@code lectern_apostrophe_split} token filter: splits every token at apostrophes, so that
 * after the {@code standard} tokenizer (Unicode word boundaries, UAX #29, which keeps
 * {@code don't} whole) words break at apostrophes as well: {@code don't} becomes {@code don},
 * {@code t}. See {@link ApostropheSplitFilter} for the characters and the offsets.
 */
@NamedComponent("lectern_apostrophe_split")
public final class ApostropheSplitTokenFilterFactory implements TokenFilterFactory {

    /** Creates the factory; the filter takes no settings. */
    public ApostropheSplitTokenFilterFactory() {}

    @Override
    public TokenStream create(TokenStream input) {
        return new ApostropheSplitFilter(input);
    }

    @Override
    public TokenStream normalize(TokenStream input) {
        // A normalized term (keyword normalizers, wildcard/prefix terms) must stay one token.
        return input;
    }
}
