//! The 24 narrative categories of spec 2.1.

use super::enum_value;

enum_value!(
    /// One of spec 2.1's 24 categories, upper case as the spec writes them.
    Category,
    "category",
    "One of the 24 narrative categories of spec 2.1, in any case: MARKET, ECOSYSTEM, SPORTS, \
     ESPORTS, SOCIAL, CULTURAL, LEGAL, POLITICAL, SCIENTIFIC, GEOPOLITICAL, CONVICTION, ECONOMICS, \
     TECHNOLOGY, HEALTH, CLIMATE, BUSINESS, ONCHAIN, SATIRE, BUILDER, CAST, COMMODITIES, MACRO, \
     EQUITIES, FOREX.",
    [
        Market => "MARKET",
        Ecosystem => "ECOSYSTEM",
        Sports => "SPORTS",
        Esports => "ESPORTS",
        Social => "SOCIAL",
        Cultural => "CULTURAL",
        Legal => "LEGAL",
        Political => "POLITICAL",
        Scientific => "SCIENTIFIC",
        Geopolitical => "GEOPOLITICAL",
        Conviction => "CONVICTION",
        Economics => "ECONOMICS",
        Technology => "TECHNOLOGY",
        Health => "HEALTH",
        Climate => "CLIMATE",
        Business => "BUSINESS",
        Onchain => "ONCHAIN",
        Satire => "SATIRE",
        Builder => "BUILDER",
        Cast => "CAST",
        Commodities => "COMMODITIES",
        Macro => "MACRO",
        Equities => "EQUITIES",
        Forex => "FOREX",
    ],
    any_case
);

#[cfg(test)]
mod tests {
    use super::Category;

    #[test]
    fn there_are_24_categories_written_as_the_spec_does() {
        assert_eq!(Category::ALL.len(), 24);
        assert_eq!("ONCHAIN".parse::<Category>(), Ok(Category::Onchain));
        assert_eq!(Category::Forex.to_string(), "FOREX");
        assert_eq!("onChain".parse::<Category>(), Ok(Category::Onchain));
        assert!("onchains".parse::<Category>().is_err());
        assert!(" ONCHAIN".parse::<Category>().is_err());
    }
}
