package dev.sluice.server.envoy;

import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.TextFormat;
import com.google.protobuf.NullValue;
import com.google.protobuf.Value;
import dev.sluice.config.envoy.EnvoyLimit;
import io.envoyproxy.envoy.extensions.common.ratelimit.v3.RateLimitDescriptor;
import io.envoyproxy.envoy.service.ratelimit.v3.RateLimitRequest;
import java.util.List;
import java.util.Map;

/**
 * The {@code dynamic_metadata} of an answer, as envoyproxy/ratelimit writes it with
 * {@code RESPONSE_DYNAMIC_METADATA}: the domain, each descriptor ({@code entries} as
 * {@code key=value}, its {@code limit} and {@code hitsAddend} if set), the request's
 * {@code hitsAddend} if set, and under {@code metadata} the {@code metadata} of the limits whose
 * descriptors passed, merged in request order (the first value of a field wins; mappings merge).
 */
final class EnvoyDynamicMetadata {
  private EnvoyDynamicMetadata() {}

  /** @param passed per descriptor, the limit whose metadata counts (it passed), or null */
  static Struct of(RateLimitRequest request, List<EnvoyLimit> passed) {
    Struct.Builder out = Struct.newBuilder();
    out.putFields("domain", string(request.getDomain()));
    ListValue.Builder ds = ListValue.newBuilder();
    for (RateLimitDescriptor d : request.getDescriptorsList()) {
      Struct.Builder s = Struct.newBuilder();
      ListValue.Builder entries = ListValue.newBuilder();
      for (RateLimitDescriptor.Entry e : d.getEntriesList()) {
        entries.addValues(string(e.getKey() + "=" + e.getValue()));
      }
      s.putFields("entries", Value.newBuilder().setListValue(entries).build());
      if (d.hasLimit()) {
        s.putFields("limit", string(TextFormat.shortDebugString(d.getLimit())));
      }
      if (d.hasHitsAddend()) {
        s.putFields("hitsAddend", number(d.getHitsAddend().getValue()));
      }
      ds.addValues(Value.newBuilder().setStructValue(s));
    }
    out.putFields("descriptors", Value.newBuilder().setListValue(ds).build());
    if (request.getHitsAddend() != 0) {
      out.putFields("hitsAddend", number(Integer.toUnsignedLong(request.getHitsAddend())));
    }
    Struct.Builder metadata = Struct.newBuilder();
    for (EnvoyLimit l : passed) {
      if (l != null && l.metadata() != null) {
        merge(metadata, value(l.metadata()).getStructValue());
      }
    }
    if (metadata.getFieldsCount() > 0) {
      out.putFields("metadata", Value.newBuilder().setStructValue(metadata).build());
    }
    return out.build();
  }

  /** Adds the fields of {@code src} that {@code dest} lacks; mappings on both sides merge. */
  private static void merge(Struct.Builder dest, Struct src) {
    for (var f : src.getFieldsMap().entrySet()) {
      Value have = dest.getFieldsMap().get(f.getKey());
      if (have == null) {
        dest.putFields(f.getKey(), f.getValue());
      } else if (have.hasStructValue() && f.getValue().hasStructValue()) {
        Struct.Builder merged = have.getStructValue().toBuilder();
        merge(merged, f.getValue().getStructValue());
        dest.putFields(f.getKey(), Value.newBuilder().setStructValue(merged).build());
      }
    }
  }

  /** A descriptor's metadata, as the Envoy format reads it, in protobuf's form. */
  private static Value value(Object v) {
    if (v instanceof Map<?, ?> m) {
      Struct.Builder b = Struct.newBuilder();
      for (Map.Entry<?, ?> e : m.entrySet()) {
        b.putFields((String) e.getKey(), value(e.getValue()));
      }
      return Value.newBuilder().setStructValue(b).build();
    }
    if (v instanceof List<?> l) {
      ListValue.Builder b = ListValue.newBuilder();
      for (Object e : l) {
        b.addValues(value(e));
      }
      return Value.newBuilder().setListValue(b).build();
    }
    if (v == null) {
      return Value.newBuilder().setNullValue(NullValue.NULL_VALUE).build();
    }
    if (v instanceof Boolean b) {
      return Value.newBuilder().setBoolValue(b).build();
    }
    if (v instanceof Number n) {
      return Value.newBuilder().setNumberValue(n.doubleValue()).build();
    }
    return string(v.toString());
  }

  private static Value string(String s) {
    return Value.newBuilder().setStringValue(s).build();
  }

  private static Value number(long n) {
    return Value.newBuilder().setNumberValue(n).build();
  }
}
