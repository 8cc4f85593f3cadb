package dev.linkqr.client

import com.google.gson.FieldNamingPolicy
import com.google.gson.Gson
import com.google.gson.GsonBuilder
import com.google.gson.TypeAdapter
import com.google.gson.stream.JsonReader
import com.google.gson.stream.JsonToken
import com.google.gson.stream.JsonWriter
import java.time.Instant
import java.time.OffsetDateTime

/** The one Gson of the client: snake_case fields, RFC 3339 timestamps as Instant. */
internal object Json {
    val gson: Gson = GsonBuilder()
        .setFieldNamingPolicy(FieldNamingPolicy.LOWER_CASE_WITH_UNDERSCORES)
        .registerTypeAdapter(Instant::class.java, InstantAdapter().nullSafe())
        .disableHtmlEscaping()
        .create()

    /** For request bodies: an explicit null (clearing a field in a PATCH) is sent, not dropped. */
    val bodies: Gson = gson.newBuilder().serializeNulls().create()
}

/** InstantAdapter reads RFC 3339 (any offset) and writes UTC with Z. */
private class InstantAdapter : TypeAdapter<Instant>() {
    override fun write(out: JsonWriter, value: Instant) {
        out.value(value.toString())
    }

    override fun read(r: JsonReader): Instant? {
        if (r.peek() == JsonToken.NULL) {
            r.nextNull()
            return null
        }
        return OffsetDateTime.parse(r.nextString()).toInstant()
    }
}
