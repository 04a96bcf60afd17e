SELECT (SELECT coalesce(json_agg(to_json(o) ORDER BY "t0"."__k0" ASC), '[]'::json)
    FROM (SELECT "t0"."id", "t0"."id" AS "__k0"
      FROM "device" "t0"
      LEFT JOIN "release" "t5" ON "t5"."id" = "t0"."is_running__release" AND (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t5"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $1::int4)) OR (fa."is_public" AND "t5"."is_final" AND "t5"."status" = 'success' AND NOT "t5"."is_invalidated"))))
      WHERE (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $2::int4)) OR "t0"."belongs_to__user" = $3::int4))) AND ((SELECT count(*)::int
        FROM "device_tag" "t1"
        LEFT JOIN "device" "t2" ON "t2"."id" = "t1"."device" AND (EXISTS (SELECT 1
          FROM "application" fa
          WHERE fa."id" = "t2"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $4::int4)) OR "t2"."belongs_to__user" = $5::int4)))
        LEFT JOIN "application" "t3" ON "t3"."id" = "t2"."belongs_to__application" AND (("t3"."is_public" OR "t3"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $6::int4))))
        LEFT JOIN "organization" "t4" ON "t4"."id" = "t3"."organization" AND ("t4"."id" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $7::int4)))
        WHERE ("t1"."device" = "t0"."id" AND ("t1"."device" IN (SELECT fd."id"
          FROM "device" fd
          WHERE fd."belongs_to__application" IN (SELECT fa."id"
            FROM "application" fa
            WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
              FROM "organization_membership" m
              WHERE m."user" = $8::int4)))))) AND ("t3"."app_name" IS DISTINCT FROM $9::text) AND ("t4"."name" IS DISTINCT FROM $10::text)) >= $11::int4) AND ("t5"."semver" IS DISTINCT FROM $12::text) AND (char_length(substr("t0"."device_name", numeric_smaller(numeric_larger(((SELECT count(*)::int
        FROM "device" "t6"
        WHERE ("t6"."is_managed_by__device" = "t0"."id" AND (EXISTS (SELECT 1
          FROM "application" fa
          WHERE fa."id" = "t6"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $13::int4)) OR "t6"."belongs_to__user" = $14::int4))))))::numeric, 0), 2147483646)::int + 1, numeric_smaller(numeric_larger(((((SELECT count(*)::int
        FROM "device_tag" "t7"
        WHERE ("t7"."device" = "t0"."id" AND ("t7"."device" IN (SELECT fd."id"
          FROM "device" fd
          WHERE fd."belongs_to__application" IN (SELECT fa."id"
            FROM "application" fa
            WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
              FROM "organization_membership" m
              WHERE m."user" = $15::int4))))))))::numeric + ($16::int4)::numeric))::numeric, 0), 2147483647)::int)) >= $17::int4)
      ORDER BY "__k0" ASC
      LIMIT 2) AS "t0"
    CROSS JOIN LATERAL (SELECT "t0"."id" AS "id") AS o)::text AS body, (SELECT count(*)::int
    FROM "device" "t0"
    LEFT JOIN "release" "t5" ON "t5"."id" = "t0"."is_running__release" AND (EXISTS (SELECT 1
      FROM "application" fa
      WHERE fa."id" = "t5"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $18::int4)) OR (fa."is_public" AND "t5"."is_final" AND "t5"."status" = 'success' AND NOT "t5"."is_invalidated"))))
    WHERE (EXISTS (SELECT 1
      FROM "application" fa
      WHERE fa."id" = "t0"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $19::int4)) OR "t0"."belongs_to__user" = $20::int4))) AND ((SELECT count(*)::int
      FROM "device_tag" "t1"
      LEFT JOIN "device" "t2" ON "t2"."id" = "t1"."device" AND (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t2"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $21::int4)) OR "t2"."belongs_to__user" = $22::int4)))
      LEFT JOIN "application" "t3" ON "t3"."id" = "t2"."belongs_to__application" AND (("t3"."is_public" OR "t3"."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $23::int4))))
      LEFT JOIN "organization" "t4" ON "t4"."id" = "t3"."organization" AND ("t4"."id" = ANY (ARRAY(SELECT m."is_member_of__organization"
        FROM "organization_membership" m
        WHERE m."user" = $24::int4)))
      WHERE ("t1"."device" = "t0"."id" AND ("t1"."device" IN (SELECT fd."id"
        FROM "device" fd
        WHERE fd."belongs_to__application" IN (SELECT fa."id"
          FROM "application" fa
          WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $25::int4)))))) AND ("t3"."app_name" IS DISTINCT FROM $26::text) AND ("t4"."name" IS DISTINCT FROM $27::text)) >= $28::int4) AND ("t5"."semver" IS DISTINCT FROM $29::text) AND (char_length(substr("t0"."device_name", numeric_smaller(numeric_larger(((SELECT count(*)::int
      FROM "device" "t6"
      WHERE ("t6"."is_managed_by__device" = "t0"."id" AND (EXISTS (SELECT 1
        FROM "application" fa
        WHERE fa."id" = "t6"."belongs_to__application" AND (fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
          FROM "organization_membership" m
          WHERE m."user" = $30::int4)) OR "t6"."belongs_to__user" = $31::int4))))))::numeric, 0), 2147483646)::int + 1, numeric_smaller(numeric_larger(((((SELECT count(*)::int
      FROM "device_tag" "t7"
      WHERE ("t7"."device" = "t0"."id" AND ("t7"."device" IN (SELECT fd."id"
        FROM "device" fd
        WHERE fd."belongs_to__application" IN (SELECT fa."id"
          FROM "application" fa
          WHERE fa."organization" = ANY (ARRAY(SELECT m."is_member_of__organization"
            FROM "organization_membership" m
            WHERE m."user" = $32::int4))))))))::numeric + ($33::int4)::numeric))::numeric, 0), 2147483647)::int)) >= $34::int4)) AS count
-- params: [2,2,2,2,2,2,2,2,"x","",0,"0.0.0",2,2,2,10,1,2,2,2,2,2,2,2,2,"x","",0,"0.0.0",2,2,2,10,1]
