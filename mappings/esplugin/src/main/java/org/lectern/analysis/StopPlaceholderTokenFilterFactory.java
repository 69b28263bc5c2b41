package org.lectern.analysis;

import java.util.List;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.TokenStream;
import org.elasticsearch.plugin.Inject;
import org.elasticsearch.plugin.NamedComponent;
import org.elasticsearch.plugin.analysis.TokenFilterFactory;
import org.elasticsearch.plugin.settings.AnalysisSettings;
import org.elasticsearch.plugin.settings.ListSetting;
import org.elasticsearch.plugin.settings.StringSetting;

/**
 * The {@code lectern_stop_placeholder} token filter: replaces each stop word (setting
 * {@code stopwords}, a list matched exactly, so put the filter after {@code lowercase}) with a
 * placeholder token (setting {@code placeholder}, default {@code _STOP_}) at the same position.
 * Without a {@code stopwords} list it changes nothing. See {@link StopPlaceholderFilter}.
 */
@NamedComponent("lectern_stop_placeholder")
public final class StopPlaceholderTokenFilterFactory implements TokenFilterFactory {

    /** The filter's settings. */
    @AnalysisSettings
    public interface Settings {
        /** The stop words. */
        @ListSetting(path = "stopwords")
        List<String> stopwords();

        /** The token that replaces a stop word. */
        @StringSetting(path = "placeholder", defaultValue = "_STOP_")
        String placeholder();
    }

    private final CharArraySet stopWords;
    private final String placeholder;

    /** Creates the factory from the filter's settings. */
    @Inject
    public StopPlaceholderTokenFilterFactory(Settings settings) {
        // Elasticsearch also instantiates every registered filter once without settings (so
        // that a filter can be named without configuring it): no stop words, nothing replaced.
        List<String> words = settings.stopwords();
        if (words == null) {
            words = List.of();
        }
        String p = settings.placeholder();
        if (p == null || p.isEmpty()) {
            throw new IllegalArgumentException("lectern_stop_placeholder needs a non-empty [placeholder]");
        }
        this.stopWords = CharArraySet.unmodifiableSet(new CharArraySet(words, false));
        this.placeholder = p;
    }

    @Override
    public TokenStream create(TokenStream input) {
        return new StopPlaceholderFilter(input, stopWords, placeholder);
    }

    @Override
    public TokenStream normalize(TokenStream input) {
        // Normalized terms (keyword normalizers, wildcard and prefix terms) keep their text.
        return input;
    }
}
