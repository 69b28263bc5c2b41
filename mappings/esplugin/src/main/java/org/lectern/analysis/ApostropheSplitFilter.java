package org.lectern.analysis;

import java.io.IOException;
import org.apache.lucene.analysis.TokenFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionLengthAttribute;
import org.apache.lucene.util.AttributeSource;

/**
 * Splits each token at apostrophes and drops the apostrophes: {@code don't} gives {@code don}
 * and {@code t}, {@code rock'n'roll} gives {@code rock}, {@code n}, {@code roll}, and a token
 * made only of apostrophes disappears (its position increment goes to the next token, so
 * phrase positions keep the gap).
 *
 * <p>The apostrophes are the ones that UAX #29 lets join two letters into one word: U+0027
 * APOSTROPHE, U+2018 LEFT and U+2019 RIGHT SINGLE QUOTATION MARK, and U+FF07 FULLWIDTH
 * APOSTROPHE. The first part keeps the token's position increment, every further part
 * follows at the next position. Offsets point at each part within the original token when the
 * token's offsets span exactly its text (no char filter changed its length); otherwise every
 * part keeps the offsets of the whole token. Other attributes (type, keyword, flags) are
 * copied from the token to each part.
 */
public final class ApostropheSplitFilter extends TokenFilter {

    private final CharTermAttribute termAtt = addAttribute(CharTermAttribute.class);
    private final OffsetAttribute offsetAtt = addAttribute(OffsetAttribute.class);
    private final PositionIncrementAttribute posIncAtt =
            addAttribute(PositionIncrementAttribute.class);
    private final PositionLengthAttribute posLenAtt = addAttribute(PositionLengthAttribute.class);

    /** State of the token being split, or null when no token is pending. */
    private AttributeSource.State pending;
    private char[] buffer = new char[0];
    private int length;
    private int next;
    private int startOffset;
    private boolean exactOffsets;
    private int pendingPosInc;
    private boolean emitted;
    /** Position increments of dropped tokens (only apostrophes), owed to the next token. */
    private int carriedPosInc;

    /** Wraps {@code input}. */
    public ApostropheSplitFilter(TokenStream input) {
        super(input);
    }

    /** Reports whether {@code c} is one of the apostrophes this filter splits at. */
    public static boolean isApostrophe(char c) {
        return c == '\'' || c == '\u2018' || c == '\u2019' || c == '\uFF07';
    }

    @Override
    public boolean incrementToken() throws IOException {
        while (true) {
            if (pending != null) {
                if (emitNextPart()) {
                    return true;
                }
                if (!emitted) {
                    carriedPosInc += pendingPosInc;
                }
                pending = null;
            }
            if (!input.incrementToken()) {
                return false;
            }
            char[] term = termAtt.buffer();
            int len = termAtt.length();
            boolean hasApostrophe = false;
            for (int i = 0; i < len; i++) {
                if (isApostrophe(term[i])) {
                    hasApostrophe = true;
                    break;
                }
            }
            if (!hasApostrophe) {
                if (carriedPosInc > 0) {
                    posIncAtt.setPositionIncrement(posIncAtt.getPositionIncrement() + carriedPosInc);
                    carriedPosInc = 0;
                }
                return true;
            }
            if (buffer.length < len) {
                buffer = new char[len];
            }
            System.arraycopy(term, 0, buffer, 0, len);
            length = len;
            next = 0;
            startOffset = offsetAtt.startOffset();
            exactOffsets = offsetAtt.endOffset() - startOffset == len;
            pendingPosInc = posIncAtt.getPositionIncrement() + carriedPosInc;
            carriedPosInc = 0;
            emitted = false;
            pending = captureState();
        }
    }

    /** Emits the next non-empty part of the pending token, or returns false if none is left. */
    private boolean emitNextPart() {
        while (next < length && isApostrophe(buffer[next])) {
            next++;
        }
        if (next >= length) {
            return false;
        }
        int start = next;
        while (next < length && !isApostrophe(buffer[next])) {
            next++;
        }
        restoreState(pending);
        termAtt.copyBuffer(buffer, start, next - start);
        if (exactOffsets) {
            offsetAtt.setOffset(startOffset + start, startOffset + next);
        }
        posIncAtt.setPositionIncrement(pendingPosInc);
        posLenAtt.setPositionLength(1);
        // Parts after the first follow at the next position.
        pendingPosInc = 1;
        emitted = true;
        return true;
    }

    @Override
    public void end() throws IOException {
        super.end();
        // A dropped trailing token still counts, as in Lucene's FilteringTokenFilter.
        posIncAtt.setPositionIncrement(posIncAtt.getPositionIncrement() + carriedPosInc);
    }

    @Override
    public void reset() throws IOException {
        super.reset();
        pending = null;
        length = 0;
        next = 0;
        emitted = false;
        carriedPosInc = 0;
    }
}
