SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."device", "t0"."tag_key", "t0"."value", "t0"."id" AS "__k0"
      FROM "device_tag" "t0"
      WHERE (TRUE) AND ("t0"."device" = $1::int4) AND ("t0"."tag_key" = $2::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT CASE WHEN "t0"."device" IS NULL THEN NULL ELSE json_build_object('__id', "t0"."device") END AS "device", "t0"."tag_key" AS "tag_key", "t0"."value" AS "value") AS o)::text AS body
-- params: [1,"location"]
