package dev.exactly.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.core.util.JsonGeneratorDelegate;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The benchmark's payment-enricher, the same rules as the C++ built-in
 * (lib/transforms/payment_enricher.cpp, default config):
 *
 * <pre>
 *   in:  {"payment_id": string, "amount_cents": integer >= 0, "merchant_id": string,
 *         "event_time": number (seconds since the Unix epoch), ...any other fields}
 *   out: the same object, other fields and their order kept, plus
 *        "amount"          amount_cents / 100.0
 *        "currency"        "USD"
 *        "risk"            "low" below 10000 cents, "medium" from 10000, "high" from 40000
 *        "merchant_tier"   "key" when merchant_id ends in '0' or '5', else "standard"
 *        "event_time_iso"  UTC, ISO-8601 with milliseconds: "2024-01-02T03:04:05.678Z"
 * </pre>
 *
 * A derived field already in the input is overwritten in place. The output is written the way
 * nlohmann::json writes it (compact; floating-point numbers in its layout, e.g. 1718000000.123,
 * 509.0, 1e+20; control characters escaped in lower-case hex), so for the benchmark's payments the
 * bytes equal the C++ built-in's. Where the C++ built-in rejects a record (an error Status), this
 * one passes the value through unchanged, logging nothing: the benchmark's input is always valid.
 */
final class PaymentEnricher {
  static final String NAME = "payment-enricher";

  private static final long MEDIUM_FROM_CENTS = 10000;
  private static final long HIGH_FROM_CENTS = 40000;
  private static final String CURRENCY = "USD";

  /** The C++ built-in refuses records nesting deeper than this (json::max_depth). */
  private static final int MAX_DEPTH = 64;

  /** event_time_iso has a four-digit year: 0000-01-01T00:00:00.000Z .. 9999-12-31T23:59:59.999Z. */
  private static final long EARLIEST_MS = -62167219200000L;
  private static final long LATEST_MS = 253402300799999L;

  private static final BigInteger UINT64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
  private static final BigInteger INT64_MIN = BigInteger.valueOf(Long.MIN_VALUE);

  private final ObjectMapper mapper;

  PaymentEnricher() {
    JsonFactory factory =
        JsonFactory.builder()
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
            .disable(JsonWriteFeature.WRITE_HEX_UPPER_CASE)
            .build();
    mapper =
        JsonMapper.builder(factory)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .build();
  }

  /** The enriched value, or {@code value} itself when it is not a valid payment. */
  byte[] apply(byte[] value) {
    if (value == null) {
      return null;
    }
    try {
      byte[] enriched = enrich(value);
      return enriched != null ? enriched : value;
    } catch (IOException | RuntimeException e) {
      return value;
    }
  }

  /** The enriched value, or null when it is not a valid payment. */
  byte[] enrich(byte[] value) throws IOException {
    JsonNode parsed = mapper.readTree(value);
    if (!(parsed instanceof ObjectNode payment)) {
      return null;
    }

    JsonNode paymentId = payment.get("payment_id");
    if (paymentId == null || !paymentId.isTextual()) {
      return null;
    }

    JsonNode amount = payment.get("amount_cents");
    if (amount == null || !amount.isIntegralNumber() || !amount.canConvertToLong()) {
      return null; // missing, not an integer, or beyond int64
    }
    long cents = amount.longValue();
    if (cents < 0) {
      return null;
    }

    JsonNode merchantId = payment.get("merchant_id");
    if (merchantId == null || !merchantId.isTextual()) {
      return null;
    }
    String tier = merchantTier(merchantId.textValue());

    JsonNode eventTime = payment.get("event_time");
    if (eventTime == null || !eventTime.isNumber()) {
      return null;
    }
    double ms = roundHalfAwayFromZero(eventTime.doubleValue() * 1000.0);
    if (!(ms >= EARLIEST_MS && ms <= LATEST_MS)) {
      return null;
    }
    String iso = isoUtc((long) ms);

    String risk = cents < MEDIUM_FROM_CENTS ? "low" : cents < HIGH_FROM_CENTS ? "medium" : "high";

    payment.put("amount", (double) cents / 100.0);
    payment.put("currency", CURRENCY);
    payment.put("risk", risk);
    payment.put("merchant_tier", tier);
    payment.put("event_time_iso", iso);

    ByteArrayOutputStream out = new ByteArrayOutputStream(value.length + 160);
    try (JsonGenerator generator = new NlohmannNumbers(mapper.getFactory().createGenerator(out))) {
      mapper.writeTree(generator, payment);
    }
    return out.toByteArray();
  }

  /** A multiple of 5 ends in 0 or 5; an id without a numeric suffix is "standard". */
  static String merchantTier(String merchantId) {
    if (merchantId.isEmpty()) {
      return "standard";
    }
    char last = merchantId.charAt(merchantId.length() - 1);
    return last == '0' || last == '5' ? "key" : "standard";
  }

  /** C's round(): halves away from zero (Math.round rounds them up). */
  static double roundHalfAwayFromZero(double x) {
    if (Double.isNaN(x) || Double.isInfinite(x)) {
      return x;
    }
    if (x >= 0) {
      double floor = Math.floor(x);
      return x - floor >= 0.5 ? floor + 1 : floor;
    }
    double ceil = Math.ceil(x);
    return ceil - x >= 0.5 ? ceil - 1 : ceil;
  }

  /** "2024-01-02T03:04:05.678Z"; {@code ms} lies within [EARLIEST_MS, LATEST_MS]. */
  static String isoUtc(long ms) {
    LocalDateTime t =
        LocalDateTime.ofEpochSecond(
            Math.floorDiv(ms, 1000L), (int) Math.floorMod(ms, 1000L) * 1_000_000, ZoneOffset.UTC);
    StringBuilder s = new StringBuilder(24);
    pad(s, t.getYear(), 4).append('-');
    pad(s, t.getMonthValue(), 2).append('-');
    pad(s, t.getDayOfMonth(), 2).append('T');
    pad(s, t.getHour(), 2).append(':');
    pad(s, t.getMinute(), 2).append(':');
    pad(s, t.getSecond(), 2).append('.');
    pad(s, t.getNano() / 1_000_000, 3).append('Z');
    return s.toString();
  }

  private static StringBuilder pad(StringBuilder s, int value, int width) {
    String digits = Integer.toString(value);
    for (int i = digits.length(); i < width; ++i) {
      s.append('0');
    }
    return s.append(digits);
  }

  /**
   * A double as nlohmann::json writes it (dtoa_impl::format_buffer with min_exp -4, max_exp 15):
   * the shortest digits that round-trip, "digits.0" for an integral value below 1e15, "0.000ddd"
   * down to 1e-4, else "d.ddde+NN". The digits come from Double.toString, which on JDK 17 is not
   * always the shortest (JDK-4511638), nor is nlohmann's Grisu2: both round-trip, and they agree
   * on the benchmark's values. JSON has no NaN or infinity; nlohmann's parser never yields them.
   */
  static String formatDouble(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      throw new IllegalArgumentException("not a finite number: " + v);
    }
    StringBuilder out = new StringBuilder(24);
    if (Math.copySign(1.0, v) < 0) {
      out.append('-');
      v = -v;
    }
    if (v == 0) {
      return out.append("0.0").toString();
    }
    // Double.toString: "I.F" or "I.FE[-]X", with I one digit in the E form.
    String text = Double.toString(v);
    int e = text.indexOf('E');
    int exponent = e < 0 ? 0 : Integer.parseInt(text.substring(e + 1));
    String mantissa = e < 0 ? text : text.substring(0, e);
    int dot = mantissa.indexOf('.');
    StringBuilder digits = new StringBuilder(mantissa.length());
    digits.append(mantissa, 0, dot).append(mantissa, dot + 1, mantissa.length());
    int point = dot + exponent; // the decimal point's place, counted from the first digit
    int lead = 0;
    while (lead < digits.length() - 1 && digits.charAt(lead) == '0') {
      ++lead;
    }
    digits.delete(0, lead);
    point -= lead;
    int end = digits.length();
    while (end > 1 && digits.charAt(end - 1) == '0') {
      --end;
    }
    digits.setLength(end);

    int k = digits.length();
    int n = point;
    final int minExp = -4;
    final int maxExp = 15;
    if (k <= n && n <= maxExp) {
      out.append(digits);
      for (int i = k; i < n; ++i) {
        out.append('0');
      }
      return out.append(".0").toString();
    }
    if (0 < n && n <= maxExp) {
      return out.append(digits, 0, n).append('.').append(digits, n, k).toString();
    }
    if (minExp < n && n <= 0) {
      out.append("0.");
      for (int i = 0; i < -n; ++i) {
        out.append('0');
      }
      return out.append(digits).toString();
    }
    out.append(digits.charAt(0));
    if (k > 1) {
      out.append('.').append(digits, 1, k);
    }
    int x = n - 1;
    out.append('e').append(x < 0 ? '-' : '+');
    x = Math.abs(x);
    if (x < 10) {
      out.append('0');
    }
    return out.append(x).toString();
  }

  /**
   * Writes numbers the way nlohmann::json does: doubles in its layout, and integers beyond
   * [int64 min, uint64 max] (which nlohmann parses as doubles) as doubles.
   */
  private static final class NlohmannNumbers extends JsonGeneratorDelegate {
    NlohmannNumbers(JsonGenerator delegate) {
      super(delegate, false);
    }

    @Override
    public void writeNumber(double v) throws IOException {
      delegate.writeNumber(formatDouble(v));
    }

    @Override
    public void writeNumber(float v) throws IOException {
      delegate.writeNumber(formatDouble(v));
    }

    @Override
    public void writeNumber(BigInteger v) throws IOException {
      if (v.compareTo(INT64_MIN) >= 0 && v.compareTo(UINT64_MAX) <= 0) {
        delegate.writeNumber(v);
      } else {
        delegate.writeNumber(formatDouble(v.doubleValue()));
      }
    }
  }
}
