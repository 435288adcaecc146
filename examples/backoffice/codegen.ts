import type { CodegenConfig } from "@graphql-codegen/cli";

// Types of every operation in src/ from the service's schema
// (../../schema/*.graphql): `npm run codegen` writes src/gql/, committed.
const config: CodegenConfig = {
  schema: "../../schema/*.graphql",
  documents: ["src/**/*.{ts,tsx}", "!src/gql/**"],
  ignoreNoDocuments: false,
  generates: {
    "src/gql/": {
      preset: "client",
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        onlyOperationTypes: true,
        enumsAsTypes: true,
        scalars: { Time: "string", Decimal: "string", Money: "string", Cursor: "string", Map: "Record<string, unknown>" },
      },
    },
  },
};

export default config;
