SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."device_name", "t0"."id" AS "__k0"
      FROM "device" "t0"
      WHERE (TRUE) AND (btrim(($1::text || "t0"."device_name"), $2::text) = $3::text)
      ORDER BY "__k0" ASC) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id", "t0"."device_name" AS "device_name") AS o)::text AS body
-- params: ["  ","\t\n\u000b\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff","kiosks-02"]
