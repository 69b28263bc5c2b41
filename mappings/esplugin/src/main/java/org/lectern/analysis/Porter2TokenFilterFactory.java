package org.lectern.analysis;

import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.snowball.SnowballFilter;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;
import org.tartarus.snowball.ext.EnglishStemmer;

/**
 * The {@code lectern_porter2} token filter: the Snowball English stemmer (Porter2) from Lucene.
 *
 * <p>Elasticsearch's own {@code stemmer}/{@code snowball} filters live in the analysis-common
 * module, which the integ-test distribution does not ship; this filter gives the same stems.
 * Tokens marked as keywords are left alone, as with every Lucene stemmer. Put it after
 * {@code lowercase}: the stemmer expects lower-case input.
 */
@NamedComponent("lectern_porter2")
public final class Porter2TokenFilterFactory implements TokenFilterFactory {

    /** Creates the factory; the filter takes no settings. */
    public Porter2TokenFilterFactory() {}

    @Override
    public TokenStream create(TokenStream input) {
        return new SnowballFilter(input, new EnglishStemmer());
    }
}
